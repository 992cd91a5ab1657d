package reference

import "io"

// DecodeCreateForTest is the create handler's decoding and validation, for the
// differential fuzz test: its result is what a create request executes.
func DecodeCreateForTest(body io.Reader) (orderID string, amount int64, reason, problem string) {
	in, problem := decodeCreate(body)
	return in.OrderID, in.Amount, in.Reason, problem
}

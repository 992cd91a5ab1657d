package faultproxy

// outcomeOf is the history type of an attempt as the CLIENT can know it: a delivered 2xx
// happened (ok), a delivered 4xx was refused (fail), everything else — a 5xx (the
// upstream's or a fault's), a 1xx/3xx, a reset, a close, a truncation, a timeout, a proxy
// error — leaves the client not knowing whether the operation happened (info).
func outcomeOf(clientResult string, clientStatus int) string {
	if clientResult != ClientDelivered {
		return OutcomeInfo
	}
	switch {
	case clientStatus >= 200 && clientStatus < 300:
		return OutcomeOK
	case clientStatus >= 400 && clientStatus < 500:
		return OutcomeFail
	}
	return OutcomeInfo
}

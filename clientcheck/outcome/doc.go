// Package outcome records what happened to a client's logical operations, for
// idemproof client-check: one JSON object per line in the file named by
// $IDEMPROOF_OUTCOME_FILE, which client-check reads to judge what the client told its
// caller against what the API's ledger holds (an operation that committed reported
// "failed" is a safety finding; one whose answer was lost and that was neither retried
// to a known outcome nor reported "unknown" is another).
//
// Wrapping an SDK call is three lines:
//
//	rec := outcome.FromEnv()                      // a no-op outside client-check
//	_, err := client.Refunds.New(ctx, params)     // the SDK's own call, retries and all
//	rec.Record(orderID, outcome.Of(err))
//
// What an operation's fate is (Result): Succeeded; Failed(status), a definite refusal
// (it did not happen); Unknown(err), which it may have. Of reads the error shapes SDKs
// give up with: nil; an HTTP status in a typed error (a StatusCode or HTTPStatusCode
// field or method, as stripe-go's *stripe.Error and openai-go's *apierror.Error carry),
// anywhere in the error's chain; a status only in the error's text ("unexpected HTTP
// status 422"), when the text names exactly one; context.DeadlineExceeded, a *url.Error
// or any other error. Only a 4xx that is no "come back later" (not 408, 409, 425 or
// 429) is Failed: a 5xx, a timeout, a reset may follow a commit, so they are Unknown,
// and so is every error Of cannot read. Never "failed" without proof.
//
// The file format, for clients in any language (JSON Lines, appended, one object per
// logical operation; the last line of an operation wins):
//
//	{"operation":"order-1","outcome":"ok","key":"9b1d…","status":201}
//	{"operation":"order-2","outcome":"unknown","note":"context deadline exceeded"}
//	{"operation":"order-3","outcome":"failed","status":422}
//
//	operation  required  the operation's entity (the order_id the requests name)
//	outcome    required  ok (it happened), failed (a definite refusal: it did not
//	                     happen), unknown (it may have: answers lost, attempts exhausted)
//	key        optional  the idempotency key the client used; shown in reports
//	status     optional  the last HTTP status the client saw; shown in reports
//	note       optional  free text, shown in reports (Record writes Unknown's error)
//
// Unknown fields, an empty operation and any other outcome are refused with the line
// number and what to fix.
package outcome

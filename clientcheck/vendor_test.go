package clientcheck_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idemproof/idemproof/clientcheck"
	"github.com/idemproof/idemproof/downstream"
	"github.com/idemproof/idemproof/verdict"
)

func TestVendorOnceComparesTheVendorWithTheTarget(t *testing.T) {
	o := goodObservation()
	_, judged := verdicts(o)[clientcheck.IDVendorOnce]
	require.False(t, judged, "no vendor watched: not judged")

	o.Vendor = map[string]downstream.Ledger{"order-1": {Calls: 2, Effects: 1}, "order-2": {Calls: 1, Effects: 1}}
	v := verdicts(o)[clientcheck.IDVendorOnce]
	require.Equal(t, verdict.Pass, v.Verdict, v.Message)

	o.Vendor["order-2"] = downstream.Ledger{Calls: 2, Effects: 2, Unkeyed: 2}
	o.Vendor["order-1"] = downstream.Ledger{}
	v = verdicts(o)[clientcheck.IDVendorOnce]
	require.Equal(t, verdict.Fail, v.Verdict, v.Message)
	require.Equal(t, map[string]int{verdict.CatDuplicated: 1, verdict.CatLost: 1}, v.Evidence.Categories)
}

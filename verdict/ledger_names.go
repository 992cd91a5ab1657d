package verdict

// Ledger names in Record.Ledger.
const (
	LedgerOperation = "operation"       // side_effects of the operation, for the run's entity
	LedgerOther     = "other_operation" // other_operation.side_effects
	// LedgerOtherEntity is side_effects read for the other entity a step acted on
	// (Step.OtherEntity), when the ledger is per entity.
	LedgerOtherEntity = "other_entity"
)

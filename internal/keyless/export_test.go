package keyless

// Hooks for the fuzz tests in keyless_test, which reach each parser
// directly (through Verify the SET check would stop most inputs first).

func ParseForFuzz(der []byte) error {
	_, err := parseMessage(der)
	return err
}

func (t *Trust) CheckpointForFuzz(env string) (int64, []byte, error) { return t.verifyCheckpoint(env) }

// EntryForFuzz verifies entry as the Rekor entry of the valid signature
// armored.
func (t *Trust) EntryForFuzz(armored, entry []byte) error {
	der, err := Unarmor(armored)
	if err != nil {
		return err
	}
	m, err := parseMessage(der)
	if err != nil {
		return err
	}
	m.rekorEntry = entry
	_, err = t.verifyEntry(m)
	return err
}

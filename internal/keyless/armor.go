package keyless

import (
	"bytes"
	"encoding/pem"
	"errors"
	"fmt"
)

// MaxSignatureSize bounds an armored signature. gitsign's are about 4 KiB
// (a certificate and a Rekor entry with a proof for a tree of 2^40 leaves
// stay far below it).
const MaxSignatureSize = 16 << 10

// ErrBadSignature is wrapped by every error about a signature that does not
// verify.
var ErrBadSignature = errors.New("keyless: bad signature")

// ArmorType is the PEM type gitsign writes in a gpgsig header.
const ArmorType = "SIGNED MESSAGE"

// IsArmored tells whether b looks like a gitsign signature (it may still
// fail to verify).
func IsArmored(b []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("-----BEGIN "+ArmorType+"-----"))
}

// Unarmor returns the DER of an armored signature: exactly one PEM block of
// type SIGNED MESSAGE, without headers, with nothing but whitespace around.
func Unarmor(armored []byte) ([]byte, error) {
	if len(armored) > MaxSignatureSize {
		return nil, fmt.Errorf("%w: signature of %d bytes exceeds %d", ErrBadSignature, len(armored), MaxSignatureSize)
	}
	block, rest := pem.Decode(bytes.TrimLeft(armored, " \t\r\n"))
	if block == nil || block.Type != ArmorType {
		return nil, fmt.Errorf("%w: not a %q PEM block", ErrBadSignature, ArmorType)
	}
	if len(block.Headers) != 0 {
		return nil, fmt.Errorf("%w: PEM headers in signature", ErrBadSignature)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, fmt.Errorf("%w: data after the signature", ErrBadSignature)
	}
	return block.Bytes, nil
}

// Armor encodes DER as gitsign does.
func Armor(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: ArmorType, Bytes: der})
}

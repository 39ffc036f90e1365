package keyless

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"strconv"
	"strings"
	"time"

	rekorpb "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"google.golang.org/protobuf/proto"
)

// Limits on a Rekor entry's inclusion proof and checkpoint (a proof for a
// tree of 2^63 leaves has 63 hashes).
const (
	maxProofHashes   = 64
	maxCheckpoint    = 8 << 10
	maxCheckpointSig = 16
)

// The entry kind gitsign's offline mode records.
const (
	rekordKind    = "hashedrekord"
	rekordVersion = "0.0.1"
)

// rekordBody is Rekor's canonical JSON of a hashedrekord v0.0.1 entry
// (keys sorted, as Rekor canonicalizes them).
type rekordBody struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Spec       struct {
		Data struct {
			Hash struct {
				Algorithm string `json:"algorithm"`
				Value     string `json:"value"`
			} `json:"hash"`
		} `json:"data"`
		Signature struct {
			Content   string `json:"content"`
			PublicKey struct {
				Content string `json:"content"`
			} `json:"publicKey"`
		} `json:"signature"`
	} `json:"spec"`
}

// RekordBody is the canonical body of the hashedrekord entry that records
// signature sig of the signed attributes signedAttrs by certificate
// certDER. gitsign leaves the body out of the embedded entry: it is
// rebuilt from the signature, so that the entry can only be this
// signature's.
func RekordBody(signedAttrs, sig, certDER []byte) []byte {
	var b rekordBody
	b.APIVersion, b.Kind = rekordVersion, rekordKind
	h := sha256.Sum256(signedAttrs)
	b.Spec.Data.Hash.Algorithm, b.Spec.Data.Hash.Value = "sha256", hex.EncodeToString(h[:])
	b.Spec.Signature.Content = base64.StdEncoding.EncodeToString(sig)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER})
	b.Spec.Signature.PublicKey.Content = base64.StdEncoding.EncodeToString(certPEM)
	out, _ := json.Marshal(b) // cannot fail: strings only
	return out
}

// SETPayload is what Rekor signs in a signed entry timestamp: the
// canonical JSON of the entry's body, integration time, log ID and index.
func SETPayload(body []byte, integratedTime int64, logID []byte, logIndex int64) []byte {
	out, _ := json.Marshal(struct {
		Body           string `json:"body"`
		IntegratedTime int64  `json:"integratedTime"`
		LogID          string `json:"logID"`
		LogIndex       int64  `json:"logIndex"`
	}{base64.StdEncoding.EncodeToString(body), integratedTime, hex.EncodeToString(logID), logIndex})
	return out
}

// logEntry is what a verified Rekor entry proves.
type logEntry struct {
	integrated time.Time
	logIndex   int64
}

// verifyEntry checks m's embedded Rekor entry against the pinned Rekor key:
// it must record exactly m's signature and certificate, with a valid
// signed entry timestamp and inclusion proof up to a signed checkpoint.
func (t *Trust) verifyEntry(m *message) (*logEntry, error) {
	var e rekorpb.TransparencyLogEntry
	if err := proto.Unmarshal(m.rekorEntry, &e); err != nil {
		return nil, fmt.Errorf("%w: Rekor entry: %v", ErrBadSignature, err)
	}
	if kv := e.GetKindVersion(); kv.GetKind() != rekordKind || kv.GetVersion() != rekordVersion {
		return nil, fmt.Errorf("%w: Rekor entry kind %.32q version %.16q, want %s %s", ErrBadSignature, kv.GetKind(), kv.GetVersion(), rekordKind, rekordVersion)
	}
	if !bytes.Equal(e.GetLogId().GetKeyId(), t.logID) {
		return nil, fmt.Errorf("%w: Rekor entry is from log %x, not the pinned Rekor log %x", ErrBadSignature, e.GetLogId().GetKeyId(), t.logID)
	}
	if e.GetIntegratedTime() <= 0 || e.GetLogIndex() < 0 {
		return nil, fmt.Errorf("%w: Rekor entry without integration time or index", ErrBadSignature)
	}
	body := RekordBody(m.signedAttrs, m.signature, m.leaf.Raw)
	set := SETPayload(body, e.GetIntegratedTime(), t.logID, e.GetLogIndex())
	digest := sha256.Sum256(set)
	if !ecdsa.VerifyASN1(t.rekorKey, digest[:], e.GetInclusionPromise().GetSignedEntryTimestamp()) {
		return nil, fmt.Errorf("%w: Rekor signed entry timestamp does not verify with the pinned Rekor key (the entry is not this signature's, or the log is another)", ErrBadSignature)
	}
	if err := t.verifyInclusion(e.GetInclusionProof(), body); err != nil {
		return nil, err
	}
	return &logEntry{integrated: time.Unix(e.GetIntegratedTime(), 0).UTC(), logIndex: e.GetLogIndex()}, nil
}

// verifyInclusion checks that body is a leaf of the tree whose root a
// checkpoint signed by the pinned Rekor key names.
func (t *Trust) verifyInclusion(p *rekorpb.InclusionProof, body []byte) error {
	if p == nil {
		return fmt.Errorf("%w: Rekor entry without inclusion proof", ErrBadSignature)
	}
	if len(p.GetHashes()) > maxProofHashes || p.GetLogIndex() < 0 || p.GetTreeSize() <= p.GetLogIndex() {
		return fmt.Errorf("%w: Rekor inclusion proof out of bounds (index %d, tree size %d, %d hashes)", ErrBadSignature, p.GetLogIndex(), p.GetTreeSize(), len(p.GetHashes()))
	}
	leaf := rfc6962.DefaultHasher.HashLeaf(body)
	if err := proof.VerifyInclusion(rfc6962.DefaultHasher, uint64(p.GetLogIndex()), uint64(p.GetTreeSize()), leaf, p.GetHashes(), p.GetRootHash()); err != nil {
		return fmt.Errorf("%w: Rekor inclusion proof: %v", ErrBadSignature, err)
	}
	size, root, err := t.verifyCheckpoint(p.GetCheckpoint().GetEnvelope())
	if err != nil {
		return err
	}
	if size != p.GetTreeSize() || !bytes.Equal(root, p.GetRootHash()) {
		return fmt.Errorf("%w: Rekor checkpoint (size %d) is not the inclusion proof's tree (size %d)", ErrBadSignature, size, p.GetTreeSize())
	}
	return nil
}

// verifyCheckpoint checks a signed note (origin, tree size, base64 root
// hash, optional lines; a blank line; signature lines "— name
// base64(keyhint || signature)") and returns its size and root. One
// signature must be the pinned Rekor key's.
func (t *Trust) verifyCheckpoint(env string) (int64, []byte, error) {
	if len(env) > maxCheckpoint {
		return 0, nil, fmt.Errorf("%w: Rekor checkpoint exceeds %d bytes", ErrBadSignature, maxCheckpoint)
	}
	text, sigs, ok := strings.Cut(env, "\n\n")
	if !ok {
		return 0, nil, fmt.Errorf("%w: Rekor checkpoint is not a signed note", ErrBadSignature)
	}
	text += "\n"
	lines := strings.Split(text, "\n")
	if len(lines) < 4 {
		return 0, nil, fmt.Errorf("%w: Rekor checkpoint lacks origin, size or root", ErrBadSignature)
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size <= 0 || strconv.FormatInt(size, 10) != lines[1] {
		return 0, nil, fmt.Errorf("%w: Rekor checkpoint tree size %.32q", ErrBadSignature, lines[1])
	}
	root, err := base64.StdEncoding.Strict().DecodeString(lines[2])
	if err != nil || len(root) != sha256.Size {
		return 0, nil, fmt.Errorf("%w: Rekor checkpoint root hash %.64q", ErrBadSignature, lines[2])
	}
	digest := sha256.Sum256([]byte(text))
	sigLines := strings.Split(strings.TrimSuffix(sigs, "\n"), "\n")
	if len(sigLines) > maxCheckpointSig {
		return 0, nil, fmt.Errorf("%w: Rekor checkpoint has more than %d signatures", ErrBadSignature, maxCheckpointSig)
	}
	for _, l := range sigLines {
		rest, ok := strings.CutPrefix(l, "\u2014 ")
		i := strings.LastIndexByte(rest, ' ')
		if !ok || i < 0 {
			return 0, nil, fmt.Errorf("%w: Rekor checkpoint signature line %.64q", ErrBadSignature, l)
		}
		sig, err := base64.StdEncoding.Strict().DecodeString(rest[i+1:])
		if err != nil || len(sig) < 5 {
			return 0, nil, fmt.Errorf("%w: Rekor checkpoint signature line %.64q", ErrBadSignature, l)
		}
		if bytes.Equal(sig[:4], t.logID[:4]) && ecdsa.VerifyASN1(t.rekorKey, digest[:], sig[4:]) {
			return size, root, nil
		}
	}
	return 0, nil, fmt.Errorf("%w: Rekor checkpoint is not signed by the pinned Rekor key", ErrBadSignature)
}

package policy

import (
	"fmt"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/strictjson"
)

// CheckStaged runs the cheap checks of a staged (unsigned) policy change,
// commit h, without decoding it: the tree holds exactly the policy files,
// each within its size bound (rule files within MaxRuleFiles and
// MaxRuleFilesSize together, read no further than the first beyond), and
// each file is strict JSON within MaxDepth and maxItems, holding exactly
// signed and signatures, its signed part in canonical order, of the
// file's _type and with signed.expires in the one form git-secure writes
// (checkExpiresRaw). It costs about the files' size, whatever they hold; go-tuf's
// decoder spends some 100 bytes a byte on a file of small values. It is
// what a server checks of a staged change anyone may push (Load decodes
// it after these checks).
func CheckStaged(r Reader, h gitrepo.Hash) error {
	root, targets, ruleFiles, err := readFiles(r, h)
	if err != nil {
		return err
	}
	return checkStagedFiles(root, targets, ruleFiles)
}

// checkStagedFiles is CheckStaged on files already read.
func checkStagedFiles(root, targets []byte, ruleFiles map[string][]byte) error {
	_, err := stagedEnvelopes(root, targets, ruleFiles)
	return err
}

// stagedEnvelopes runs CheckStaged's checks on files already read and
// returns their envelopes by path (root.json, targets.json,
// rules/NAME.json).
func stagedEnvelopes(root, targets []byte, ruleFiles map[string][]byte) (map[string]*envelope, error) {
	out := make(map[string]*envelope, 2+len(ruleFiles))
	check := func(name string, data []byte, limit int, typ string) error {
		e, err := readEnvelope(name, data, limit)
		if err != nil {
			return err
		}
		signed, err := strictjson.Members(e.signed)
		if err != nil {
			return fmt.Errorf("%w: %s: signed: %v", ErrMalformed, name, err)
		}
		if got := string(signed["_type"]); got != `"`+typ+`"` {
			return fmt.Errorf("%w: %s: signed._type must be %q", ErrMalformed, name, typ)
		}
		out[name] = e
		return checkExpiresRaw(name, signed["expires"])
	}
	if err := check(RootFile, root, MaxFileSize, "root"); err != nil {
		return nil, err
	}
	if err := check(TargetsFile, targets, MaxTargetsSize, "targets"); err != nil {
		return nil, err
	}
	for name, data := range ruleFiles {
		if err := check(RulesDir+"/"+name+".json", data, MaxFileSize, "targets"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

package gitrepo

import "bufio"

// ObjectTypes returns the type of each object ("commit", "tag", ...; ""
// for a missing one) through one "git cat-file --batch-check" whose
// requests are written ahead, so that thousands of lookups cost no round
// trip each (verify --at tells the tags among many recorded values).
func (r *Repo) ObjectTypes(hashes []Hash) ([]string, error) {
	if r.isClosed() {
		return nil, errClosed
	}
	if len(hashes) == 0 {
		return nil, nil
	}
	types := make([]string, len(hashes))
	err := r.catFilePipelined("--batch-check", hashes, 64<<10, func(rd *bufio.Reader) error {
		c := &catFile{stdout: rd}
		for i, h := range hashes {
			info, err := c.readHeader(h)
			if err != nil {
				return err
			}
			if !info.missing {
				types[i] = info.typ
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return types, nil
}

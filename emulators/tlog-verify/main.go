// Command tlog-verify checks a Quire repo's transparency log with Go's own implementations of
// signed notes (golang.org/x/mod/sumdb/note) and RFC 9162 tree proofs (golang.org/x/mod/sumdb/tlog),
// independently of Quire's code: the checkpoint's signature, the inclusion of every commit hash the
// chain shows, and, given an older checkpoint, that the current one extends it.
//
//	tlog-verify -server URL -repo NAME -key VKEY [-witness VKEY]... [-old FILE] [-save FILE]
//
// Each -witness names a witness's verifier key whose cosignature (a plain Ed25519 signed-note
// signature over the same checkpoint text) the current checkpoint must carry as well.
//
// The bearer token, if any, is read from QUIRE_TOKEN. It prints one line, `verified <origin>
// <size> <root>`, and exits 0, or prints why not and exits 1.
package main

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type checkpoint struct {
	origin string
	size   int64
	root   tlog.Hash
	note   []byte
}

// keys collects a repeated flag.
type keys []string

func (k *keys) String() string     { return strings.Join(*k, ",") }
func (k *keys) Set(v string) error { *k = append(*k, v); return nil }

type client struct {
	server, repo, token string
}

func main() {
	server := flag.String("server", "", "the Quire server's base URL")
	repo := flag.String("repo", "", "the repo's full name")
	key := flag.String("key", "", "the log's verifier key (GET /.well-known/quire-log-key)")
	old := flag.String("old", "", "a checkpoint seen before, which the current one must extend")
	save := flag.String("save", "", "where to write the verified checkpoint")
	var witnesses keys
	flag.Var(&witnesses, "witness", "a witness's verifier key whose cosignature is required (repeatable)")
	flag.Parse()
	c := client{server: strings.TrimRight(*server, "/"), repo: *repo, token: os.Getenv("QUIRE_TOKEN")}
	line, err := run(c, *key, witnesses, *old, *save)
	if err != nil {
		fmt.Println("refused:", err)
		os.Exit(1)
	}
	fmt.Println(line)
}

func run(c client, key string, witnessKeys []string, oldFile, save string) (string, error) {
	verifier, err := note.NewVerifier(key)
	if err != nil {
		return "", fmt.Errorf("key: %w", err)
	}
	required := []note.Verifier{verifier}
	for _, w := range witnessKeys {
		v, err := note.NewVerifier(w)
		if err != nil {
			return "", fmt.Errorf("witness key: %w", err)
		}
		required = append(required, v)
	}
	body, err := c.get("/checkpoint")
	if err != nil {
		return "", err
	}
	cur, err := open(body, required...)
	if err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	if oldFile != "" {
		if err := extends(c, verifier, oldFile, cur); err != nil {
			return "", err
		}
	}
	if err := includesChain(c, cur); err != nil {
		return "", err
	}
	if save != "" {
		if err := os.WriteFile(save, cur.note, 0o644); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("verified %s %d %s", cur.origin, cur.size, cur.root), nil
}

// open checks that a signed note carries a valid signature by every one of the keys (the log's,
// then any witnesses') and parses its checkpoint text. note.Open refuses a note whose signature by
// a known key does not verify; a key with no signature line at all is checked here.
func open(msg []byte, verifiers ...note.Verifier) (checkpoint, error) {
	n, err := note.Open(msg, note.VerifierList(verifiers...))
	if err != nil {
		return checkpoint{}, err
	}
	for _, v := range verifiers {
		if !signedBy(n, v) {
			return checkpoint{}, fmt.Errorf("no signature by %s", v.Name())
		}
	}
	lines := strings.SplitN(n.Text, "\n", 4)
	if len(lines) < 4 {
		return checkpoint{}, errors.New("not a checkpoint: fewer than three lines")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 {
		return checkpoint{}, fmt.Errorf("bad tree size %q", lines[1])
	}
	root, err := tlog.ParseHash(lines[2])
	if err != nil {
		return checkpoint{}, fmt.Errorf("bad root hash: %w", err)
	}
	return checkpoint{origin: lines[0], size: size, root: root, note: msg}, nil
}

func signedBy(n *note.Note, v note.Verifier) bool {
	for _, sig := range n.Sigs {
		if sig.Name == v.Name() && sig.Hash == v.KeyHash() {
			return true
		}
	}
	return false
}

// extends proves, with the server's consistency proof, that cur's tree has old's as its prefix.
func extends(c client, verifier note.Verifier, oldFile string, cur checkpoint) error {
	msg, err := os.ReadFile(oldFile)
	if err != nil {
		return err
	}
	old, err := open(msg, verifier)
	if err != nil {
		return fmt.Errorf("old checkpoint: %w", err)
	}
	if old.origin != cur.origin {
		return fmt.Errorf("the old checkpoint is of %s, not %s", old.origin, cur.origin)
	}
	if old.size > cur.size {
		return fmt.Errorf("the log shrank from %d to %d leaves", old.size, cur.size)
	}
	if old.size == 0 {
		return nil
	}
	var proof struct{ Hashes []string }
	if err := c.getJSON(fmt.Sprintf("/proof/consistency?from=%d&to=%d", old.size, cur.size), &proof); err != nil {
		return err
	}
	hashes, err := parseHashes(proof.Hashes)
	if err != nil {
		return err
	}
	if err := tlog.CheckTree(tlog.TreeProof(hashes), cur.size, cur.root, old.size, old.root); err != nil {
		return fmt.Errorf("the log of %d leaves (%s) does not extend the one of %d (%s): %w",
			cur.size, cur.root, old.size, old.root, err)
	}
	return nil
}

// includesChain proves that each commit hash the chain shows is its leaf in cur's tree.
func includesChain(c client, cur checkpoint) error {
	for from := int64(1); from <= cur.size; from += 1000 {
		to := min(from+999, cur.size)
		var chain struct {
			Commits []struct {
				Sequence int64
				Hash     string
			}
		}
		if err := c.getJSON(fmt.Sprintf("/chain?from=%d&to=%d", from, to), &chain); err != nil {
			return err
		}
		if int64(len(chain.Commits)) != to-from+1 {
			return fmt.Errorf("the chain shows %d commits in [%d, %d]", len(chain.Commits), from, to)
		}
		for _, commit := range chain.Commits {
			if err := includes(c, cur, commit.Sequence, commit.Hash); err != nil {
				return err
			}
		}
	}
	return nil
}

func includes(c client, cur checkpoint, sequence int64, hexHash string) error {
	leaf, err := hex.DecodeString(hexHash)
	if err != nil || len(leaf) != 32 {
		return fmt.Errorf("commit %d: bad hash %q", sequence, hexHash)
	}
	var proof struct{ Hashes []string }
	if err := c.getJSON(fmt.Sprintf("/proof/inclusion?sequence=%d&size=%d", sequence, cur.size), &proof); err != nil {
		return err
	}
	hashes, err := parseHashes(proof.Hashes)
	if err != nil {
		return err
	}
	if err := tlog.CheckRecord(tlog.RecordProof(hashes), cur.size, cur.root, sequence-1, tlog.RecordHash(leaf)); err != nil {
		return fmt.Errorf("commit %d (%s) is not leaf %d of the log of %d leaves: %w", sequence, hexHash, sequence-1, cur.size, err)
	}
	return nil
}

func parseHashes(encoded []string) ([]tlog.Hash, error) {
	hashes := make([]tlog.Hash, len(encoded))
	for i, e := range encoded {
		b, err := base64.StdEncoding.DecodeString(e)
		if err != nil || len(b) != tlog.HashSize {
			return nil, fmt.Errorf("bad proof hash %q", e)
		}
		copy(hashes[i][:], b)
	}
	return hashes, nil
}

func (c client) get(path string) ([]byte, error) {
	req, err := http.NewRequest("GET", c.server+"/repos/"+escapeRepo(c.repo)+"/-"+path, nil)
	if err != nil {
		return nil, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", path, res.Status, strings.TrimSpace(string(body)))
	}
	return body, nil
}

func (c client) getJSON(path string, into any) error {
	body, err := c.get(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(body, into)
}

func escapeRepo(repo string) string {
	segments := strings.Split(repo, "/")
	for i, s := range segments {
		segments[i] = url.PathEscape(s)
	}
	return strings.Join(segments, "/")
}

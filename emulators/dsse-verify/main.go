// Command dsse-verify checks Quire's check attestations with the DSSE reference implementation
// (github.com/secure-systems-lab/go-securesystemslib/dsse), independently of Quire's code: each
// envelope of a JSON array (GET /repos/{name}/-/attestations) must carry a valid Ed25519 signature
// by the log's key over PAE(payloadType, payload), and its payload must be an in-toto Statement v1
// with the test-result predicate and one subject digested by SHA-256.
//
//	dsse-verify -key VKEY -file ENVELOPES.json
//
// VKEY is the log's verifier key in signed-note form (GET /.well-known/quire-log-key). It prints
// one line per envelope, `verified <subject name> <sha256> <result> <check name>`, and exits 0,
// or prints why not and exits 1.
package main

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
)

const (
	payloadType   = "application/vnd.in-toto+json"
	statementType = "https://in-toto.io/Statement/v1"
	testResult    = "https://in-toto.io/attestation/test-result/v0.1"
)

// ed25519Verifier is the log's public key as a dsse.Verifier; its keyid is the hex SHA-256 of the
// raw key, as Quire names it in each signature.
type ed25519Verifier struct{ key ed25519.PublicKey }

func (v ed25519Verifier) Verify(_ context.Context, data, sig []byte) error {
	if !ed25519.Verify(v.key, data, sig) {
		return errors.New("bad Ed25519 signature")
	}
	return nil
}

func (v ed25519Verifier) KeyID() (string, error) {
	sum := sha256.Sum256(v.key)
	return hex.EncodeToString(sum[:]), nil
}

func (v ed25519Verifier) Public() crypto.PublicKey { return v.key }

type statement struct {
	Type    string `json:"_type"`
	Subject []struct {
		Name   string            `json:"name"`
		Digest map[string]string `json:"digest"`
	} `json:"subject"`
	PredicateType string `json:"predicateType"`
	Predicate     struct {
		Result    string `json:"result"`
		CheckName string `json:"check_name"`
	} `json:"predicate"`
}

func main() {
	key := flag.String("key", "", "the log's verifier key (GET /.well-known/quire-log-key)")
	file := flag.String("file", "", "a JSON array of DSSE envelopes")
	flag.Parse()
	lines, err := run(*key, *file)
	if err != nil {
		fmt.Println("refused:", err)
		os.Exit(1)
	}
	fmt.Print(lines)
}

// publicKey reads a signed-note verifier key: <name>+<hash>+<base64(0x01 || 32-byte key)>.
func publicKey(vkey string) (ed25519.PublicKey, error) {
	// The key's base64 may hold '+' itself: only the first two separate fields.
	parts := strings.SplitN(strings.TrimSpace(vkey), "+", 3)
	if len(parts) != 3 {
		return nil, errors.New("the key is not <name>+<hash>+<key>")
	}
	raw, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(raw) != 1+ed25519.PublicKeySize || raw[0] != 0x01 {
		return nil, errors.New("the key is not an Ed25519 signed-note key")
	}
	return ed25519.PublicKey(raw[1:]), nil
}

func run(vkey, file string) (string, error) {
	key, err := publicKey(vkey)
	if err != nil {
		return "", err
	}
	verifier, err := dsse.NewEnvelopeVerifier(ed25519Verifier{key})
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	var envelopes []dsse.Envelope
	if err := json.Unmarshal(data, &envelopes); err != nil {
		return "", fmt.Errorf("envelopes: %w", err)
	}
	var out strings.Builder
	for i := range envelopes {
		line, err := verify(verifier, &envelopes[i])
		if err != nil {
			return "", fmt.Errorf("envelope %d: %w", i, err)
		}
		out.WriteString(line + "\n")
	}
	return out.String(), nil
}

func verify(verifier *dsse.EnvelopeVerifier, e *dsse.Envelope) (string, error) {
	if e.PayloadType != payloadType {
		return "", fmt.Errorf("payload type %q", e.PayloadType)
	}
	if _, err := verifier.Verify(context.Background(), e); err != nil {
		return "", err
	}
	payload, err := e.DecodeB64Payload()
	if err != nil {
		return "", err
	}
	var s statement
	if err := json.Unmarshal(payload, &s); err != nil {
		return "", fmt.Errorf("statement: %w", err)
	}
	if s.Type != statementType || s.PredicateType != testResult || len(s.Subject) != 1 {
		return "", fmt.Errorf("not a test-result statement of one subject: %s, %s", s.Type, s.PredicateType)
	}
	digest := s.Subject[0].Digest["sha256"]
	if len(digest) != 64 {
		return "", errors.New("the subject has no sha256 digest")
	}
	return fmt.Sprintf("verified %s %s %s %s", s.Subject[0].Name, digest, s.Predicate.Result, s.Predicate.CheckName), nil
}

package profile

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// TLSOptions say how an https:// target is verified (profile `tls:`). Every connection
// the harness makes to the target uses them: the attempts sent straight to base_url, the
// ledger reads, the in-process fault proxy's upstream calls, and a proxy.url over https.
type TLSOptions struct {
	// CAFile is a PEM file of CA certificates trusted besides the system's roots (a test
	// CA, a company CA), for this profile only; SSL_CERT_FILE would change the roots of
	// the whole process. A relative path is read from the profile file's folder
	// (Load; Parse and profiles built in Go: the working directory). ""
	// adds none.
	CAFile string `yaml:"ca_file,omitempty" json:"ca_file,omitempty"`
}

// maxCAFileBytes bounds a tls.ca_file: a large CA bundle is a few hundred KiB, and a
// path to something else (a device, a log) must be an error, not a read that never ends.
const maxCAFileBytes = 16 << 20

// TLSClientConfig is the TLS configuration the harness verifies the target with: the
// system's roots plus tls.ca_file's certificates. nil (and no error) when the profile
// names no tls.ca_file: Go's defaults, the system's roots. Each call reads the file
// again; give every http.Transport its own Clone (a Transport may change the config it
// is given).
func (p *Profile) TLSClientConfig() (*tls.Config, error) {
	if p.TLS == nil || p.TLS.CAFile == "" {
		return nil, nil
	}
	c, err := CAFileTLSConfig(p.TLS.CAFile)
	if err != nil {
		return nil, fmt.Errorf("tls.ca_file: %w", err)
	}
	return c, nil
}

// CAFileTLSConfig is a TLS client configuration that trusts the system's roots and the
// PEM certificates of path (`idemproof proxy --upstream-ca-file`, tls.ca_file); nil for
// an empty path. The error says what to fix.
func CAFileTLSConfig(path string) (*tls.Config, error) {
	if path == "" {
		return nil, nil
	}
	pool, err := loadCAFile(path)
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool}, nil
}

// loadCAFile returns the system's roots (an empty pool where the system has none Go can
// read) with the PEM certificates of path added. The error says what to fix.
func loadCAFile(path string) (*x509.CertPool, error) {
	data, err := readCAFile(path)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s holds no PEM certificate (a -----BEGIN CERTIFICATE----- block): give the certificate of the CA that signed the server's certificate, in PEM form (not its key, not DER)", path)
	}
	return pool, nil
}

// readCAFile reads a regular file of at most maxCAFileBytes.
func readCAFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read it (%w): give the PEM file of the CA that signed the server's certificate (a relative path is read from the profile's folder)", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot read %s (%w)", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s): give the PEM file of the CA that signed the server's certificate", path, st.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxCAFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s (%w)", path, err)
	}
	if len(data) > maxCAFileBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes, too large for a file of CA certificates", path, maxCAFileBytes)
	}
	return data, nil
}

func checkTLS(o *TLSOptions) []fieldError {
	if o == nil || o.CAFile == "" {
		return nil
	}
	if _, err := loadCAFile(o.CAFile); err != nil {
		return []fieldError{{Path: "tls.ca_file", Msg: err.Error()}}
	}
	return nil
}

// resolveTLSPaths makes a relative tls.ca_file relative to dir, the folder of the
// profile file that names it (before `extends:` merges files of several folders).
func resolveTLSPaths(root *yaml.Node, dir string) {
	v := mappingValue(mappingValue(root, "tls"), "ca_file")
	if v == nil || v.Kind != yaml.ScalarNode || v.Value == "" || filepath.IsAbs(v.Value) {
		return
	}
	v.Value = filepath.Join(dir, v.Value)
}

package profile

import (
	"fmt"
	"strings"
)

// checkKeyedMethods validates keyed_methods: method tokens, the operation's among them.
func checkKeyedMethods(p *Profile) []fieldError {
	if len(p.KeyedMethods) == 0 {
		return nil
	}
	var errs []fieldError
	for i, m := range p.KeyedMethods {
		if m == "" || strings.ToUpper(m) != m || strings.ContainsAny(m, " \t/:") {
			errs = append(errs, fieldError{Path: fmt.Sprintf("keyed_methods[%d]", i), Msg: fmt.Sprintf("must be an upper-case HTTP method such as POST, got %q", m)})
		}
	}
	if p.Operation.Method != "" && !p.keyed(p.Operation.Method) {
		errs = append(errs, fieldError{Path: "keyed_methods", Msg: fmt.Sprintf("must include operation.method %s: the operation is the keyed call", p.Operation.Method)})
	}
	return errs
}

// keyed reports whether the profile declares the key to apply to method.
func (p *Profile) keyed(method string) bool {
	for _, m := range p.KeyedMethods {
		if m == method {
			return true
		}
	}
	return false
}

// missingKeyedMethods says why key/get-ignored cannot run ("" when it can): it needs
// keyed_methods, and the ledger read must use a method outside them.
func (p *Profile) missingKeyedMethods() string {
	if len(p.KeyedMethods) == 0 {
		return "keyed_methods not declared"
	}
	if p.keyed(p.SideEffects.Method) {
		return "keyed_methods includes the ledger's method " + p.SideEffects.Method
	}
	return ""
}

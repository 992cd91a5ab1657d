package faultproxy

import (
	"net"
	"strings"
)

// hostSet is the Host values the admin API answers to. A DNS-rebinding attack makes a
// browser send an attacker's page's own host name to a loopback address, so refusing
// names the proxy was not told about keeps such pages out even where the browser sends
// no Origin. Always allowed: IP literals (a rebinding page cannot make the browser name
// an IP it does not serve), localhost and *.localhost, the host of the admin listen
// address; and the names given in Config.AdminAllowHosts ("*" allows every name).
type hostSet struct {
	names map[string]bool
	any   bool
}

func newHostSet(adminAddr string, allow []string) hostSet {
	hs := hostSet{names: map[string]bool{}}
	if h, _, err := net.SplitHostPort(adminAddr); err == nil && h != "" {
		hs.names[normalHost(h)] = true
	}
	for _, h := range allow {
		if h == "*" {
			hs.any = true
		}
		hs.names[normalHost(h)] = true
	}
	return hs
}

func (hs hostSet) allowed(hostport string) bool {
	if hs.any || hostport == "" {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = normalHost(host)
	if net.ParseIP(strings.Trim(host, "[]")) != nil {
		return true
	}
	return host == "localhost" || strings.HasSuffix(host, ".localhost") || hs.names[host]
}

func normalHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

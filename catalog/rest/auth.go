package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/icectl/icectl/catalog/caturi"
	"github.com/icectl/icectl/iceberg/fileio/awsauth"
)

// authenticator supplies the Authorization header: a static bearer token,
// or an OAuth2 client-credentials token fetched, cached and refreshed
// before it expires (or once after a 401).
type authenticator struct {
	http     *http.Client
	now      func() time.Time
	timeout  time.Duration
	tokenURL string
	// signer, when set, signs token requests to the catalog's own URI
	// (SigV4), as PyIceberg's adapter mounted on that URI and Java's
	// signing init session do.
	signer *awsauth.Signer
	form   url.Values // the client-credentials request; holds the secret
	secret string

	mu      sync.Mutex
	token   string
	expires time.Time // zero: never expires
	// old keeps superseded tokens so that an error message echoing one
	// is still redacted.
	old []string
}

func newAuthenticator(client *http.Client, now func() time.Time, timeout time.Duration, uri string, props map[string]string, signer *awsauth.Signer) (*authenticator, error) {
	a := &authenticator{http: client, now: now, timeout: timeout, token: props[PropToken]}
	cred, ok := props[PropCredential]
	if !ok || cred == "" {
		return a, nil
	}
	id, secret, found := strings.Cut(cred, ":")
	if !found {
		id, secret = "", cred
	}
	if secret == "" {
		return nil, fmt.Errorf("rest catalog property %s: empty client secret", PropCredential)
	}
	a.secret = secret
	a.form = url.Values{"grant_type": {"client_credentials"}, "client_secret": {secret}}
	if id != "" {
		a.form.Set("client_id", id)
	}
	scope := props[PropScope]
	if scope == "" {
		scope = defaultScope
	}
	a.form.Set("scope", scope)
	for _, k := range []string{PropAudience, PropResource} {
		if v := props[k]; v != "" {
			a.form.Set(k, v)
		}
	}
	tokenURL := props[PropOAuth2ServerURI]
	switch {
	case tokenURL == "":
		tokenURL = uri + "/v1/oauth/tokens"
	case !strings.Contains(tokenURL, "://"):
		// Java resolves a relative server URI against the catalog URI.
		tokenURL = uri + "/" + strings.TrimPrefix(tokenURL, "/")
	}
	a.tokenURL = tokenURL
	if strings.HasPrefix(tokenURL, uri+"/") {
		a.signer = signer
	}
	return a, nil
}

// canFetch reports whether the authenticator can get itself a new token.
func (a *authenticator) canFetch() bool { return a.form != nil }

// header returns the Authorization header value, "" without auth,
// fetching a token first when there is none or it is about to expire.
func (a *authenticator) header(ctx context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.canFetch() && (a.token == "" || a.expiringLocked()) {
		if err := a.fetchLocked(ctx); err != nil {
			return "", err
		}
	}
	if a.token == "" {
		return "", nil
	}
	return "Bearer " + a.token, nil
}

// expiringLocked reports whether the token is due for refresh: expires is
// set a tenth of its life (at most a minute) before the real expiry, so no
// request leaves with a token that expires on the way.
func (a *authenticator) expiringLocked() bool {
	if a.expires.IsZero() {
		return false
	}
	return !a.now().Before(a.expires)
}

// rejected is called after a 401 answered a request sent with header. It
// reports whether a fresh token was obtained and the request may be sent
// once more.
func (a *authenticator) rejected(ctx context.Context, header string) (bool, error) {
	if !a.canFetch() {
		return false, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if "Bearer "+a.token != header {
		return true, nil // another request already refreshed it
	}
	if err := a.fetchLocked(ctx); err != nil {
		return false, err
	}
	return true, nil
}

type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   *int64 `json:"expires_in"`
}

type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

// fetchLocked runs the client-credentials grant.
func (a *authenticator) fetchLocked(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	form := []byte(a.form.Encode())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.tokenURL, bytes.NewReader(form))
	if err != nil {
		return fmt.Errorf("oauth2 token request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if a.signer != nil {
		if err := a.signer.Sign(ctx, req, form); err != nil {
			return fmt.Errorf("oauth2 token request: %w", signError(err))
		}
	}
	start := a.now()
	resp, err := a.http.Do(req)
	if err != nil {
		return fmt.Errorf("oauth2 token request to %s: %w", caturi.Redact(a.tokenURL), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("oauth2 token response from %s: %w", caturi.Redact(a.tokenURL), err)
	}
	if resp.StatusCode != http.StatusOK {
		msg := ""
		var oe oauthError
		if json.Unmarshal(body, &oe) == nil && oe.Error != "" {
			msg = ": " + oe.Error
			if oe.Description != "" {
				msg += ": " + oe.Description
			}
		}
		return fmt.Errorf("oauth2 token request to %s: %d %s%s: %w",
			caturi.Redact(a.tokenURL), resp.StatusCode, http.StatusText(resp.StatusCode), a.redactLocked(msg), ErrNotAuthorized)
	}
	var tr tokenResponse
	if err := json.Unmarshal(body, &tr); err != nil {
		return fmt.Errorf("oauth2 token response from %s: malformed JSON", caturi.Redact(a.tokenURL))
	}
	if tr.AccessToken == "" {
		return fmt.Errorf("oauth2 token response from %s: no access_token", caturi.Redact(a.tokenURL))
	}
	if tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "bearer") && !strings.EqualFold(tr.TokenType, "N_A") {
		return fmt.Errorf("oauth2 token response from %s: token_type %q, want bearer", caturi.Redact(a.tokenURL), tr.TokenType)
	}
	if a.token != "" {
		a.old = append(a.old, a.token)
		if len(a.old) > 8 {
			a.old = a.old[len(a.old)-8:]
		}
	}
	a.token = tr.AccessToken
	a.expires = time.Time{}
	if tr.ExpiresIn != nil && *tr.ExpiresIn > 0 {
		life := time.Duration(*tr.ExpiresIn) * time.Second
		margin := min(life/10, time.Minute)
		a.expires = start.Add(life - margin)
	}
	return nil
}

// redact removes every secret the authenticator knows from s.
func (a *authenticator) redact(s string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.redactLocked(s)
}

func (a *authenticator) redactLocked(s string) string {
	for _, secret := range append([]string{a.token, a.secret}, a.old...) {
		if len(secret) >= 4 {
			s = strings.ReplaceAll(s, secret, "[REDACTED]")
		}
	}
	return s
}

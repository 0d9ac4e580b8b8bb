/* Signing in to the console (docs/console.md#signing-in), from its config.json:
 * - `vwr dev` (`devTokens: true`): the token of `#token=…` in the address, which
 *   `vwr admin console-token` prints; it is taken out of the address at once and kept in this
 *   tab's sessionStorage only, so a reload keeps it and a new tab asks again;
 * - otherwise OpenID Connect, authorization code with PKCE (oidc-client-ts, in vendor.js)
 *   against `issuer` and `clientId`, the user kept in sessionStorage. */

var TOKEN_KEY = 'vwr.console.token';

/** The console's own address, where the issuer sends the browser back: its folder
 *  (`/vwr-console/`, `/console/`), as the app client lists it. */
function consoleHome(location) {
  return location.origin + location.pathname.replace(/[^/]*$/, '');
}

/** Signs in with `cfg` (config.json) in `env` ({location, history, session, oidc}): a promise
 *  of `{token, renew}` when signed in (`renew()` forgets the token: sign-out, or a token the API
 *  no longer takes), else `{needed: 'oidc', go}` (a sign-in to start
 *  with `go()`), `{needed: 'dev'}` (a dev token to fetch) or `{needed: 'config'}` (config.json
 *  names no way to sign in). */
function signIn(env, cfg) {
  var loc = env.location;
  if (cfg.devTokens) {
    var got = tokenFromHash(loc.hash);
    if (/^#token=/.test(loc.hash)) env.history.replaceState(null, '', loc.pathname + loc.search + got.hash);
    if (got.token) setItem(env.session, TOKEN_KEY, got.token);
    var kept = getItem(env.session, TOKEN_KEY);
    if (kept) {
      return Promise.resolve({
        token: kept,
        renew: function () {
          setItem(env.session, TOKEN_KEY, null);
          return Promise.resolve({ needed: 'dev' });
        },
      });
    }
  }
  if (!cfg.issuer || !cfg.clientId || !env.oidc) return Promise.resolve({ needed: cfg.devTokens ? 'dev' : 'config' });
  var mgr = new env.oidc.UserManager({
    authority: cfg.issuer,
    client_id: cfg.clientId,
    redirect_uri: consoleHome(loc),
    post_logout_redirect_uri: consoleHome(loc),
    response_type: 'code',
    scope: cfg.scopes || 'openid email profile',
    // Signed out when the token ends; no hidden iframe against the issuer (the console's
    // policy frames nothing but the waiting page's preview).
    automaticSilentRenew: false,
    userStore: new env.oidc.WebStorageStateStore({ store: env.session }),
  });
  var back = /[?&]state=/.test(loc.search) && /[?&](code|error)=/.test(loc.search);
  var user = back
    ? mgr.signinRedirectCallback().then(function (u) {
        env.history.replaceState(null, '', loc.pathname + loc.hash);
        return u;
      })
    : mgr.getUser();
  function start() {
    return mgr.signinRedirect();
  }
  return user.then(
    function (u) {
      if (!u || u.expired) return { needed: 'oidc', go: start };
      return {
        // The ID token: a JWT from any issuer, its audience the app client (what the console
        // API's JWT authorizer checks), naming the person and carrying the groups claim.
        token: u.id_token || u.access_token,
        renew: function () {
          return mgr.removeUser().then(function () {
            return { needed: 'oidc', go: start };
          });
        },
      };
    },
    function (e) {
      if (back) env.history.replaceState(null, '', loc.pathname + loc.hash);
      return { needed: 'oidc', go: start, error: String((e && e.message) || e) };
    }
  );
}

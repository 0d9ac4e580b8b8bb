// GENERATED from edge/src by edge/build.mjs
var r=/^\/vwr\/([A-Za-z0-9_-]{1,64})\/?$/;function handler(s){var t=s.request;return r.test(t.uri)&&"/vwr/assets"!==t.uri&&"/vwr/assets/"!==t.uri&&(t.uri="/vwr/index.html"),t}

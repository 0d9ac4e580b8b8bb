// The CloudFront distribution's cache behaviours, as the local stand-ins route by them
// (edge/local/proxy.mjs, localstack/cloudfront-router.mjs): read at start from the file
// Terraform builds the distribution from, terraform/modules/edge/behaviours.json (`vwr dev`
// reads it too: cli/src/dev/behaviours.rs). CloudFront takes the first ordered pattern that
// matches the raw path, case-sensitively, else the default; every pattern of the file is a
// literal prefix and one trailing `*` (tests/infra/contract.py holds it to that), matched here
// as such. No dependencies.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BEHAVIOURS_FILE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'terraform', 'modules', 'edge', 'behaviours.json');

/** The behaviours of `file`: {default, ordered: [{…, prefix}]}, each ordered one with the prefix its pattern matches. */
export function loadBehaviours(file = BEHAVIOURS_FILE) {
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  if (!doc || typeof doc.default !== 'object' || !Array.isArray(doc.ordered)) throw new Error(`${file}: expected {"default": {…}, "ordered": [{…}, …]}`);
  const ordered = doc.ordered.map((b) => {
    const p = b.pathPattern;
    if (typeof p !== 'string' || !p.startsWith('/') || !p.endsWith('*') || /[*?]/.test(p.slice(0, -1))) {
      throw new Error(`${file}: pattern ${JSON.stringify(p)} is not a path prefix and one trailing *`);
    }
    return { ...b, prefix: p.slice(0, -1) };
  });
  return { default: doc.default, ordered };
}

/** The behaviour CloudFront picks for a raw (undecoded) path. */
export function behaviourFor(behaviours, uri) {
  return behaviours.ordered.find((b) => uri.startsWith(b.prefix)) || behaviours.default;
}

#!/usr/bin/env node
// gen.js records what node-semver, npm-pick-manifest, npm-package-arg and
// validate-npm-package-name answer for a fixed set of inputs, so that the Go
// ports in internal/semver and internal/npmspec can be checked against the
// real thing without node at test time.
//
//   node internal/semver/testdata/gen.js
//
// writes internal/semver/testdata/vectors.json and
// internal/npmspec/testdata/npa.json. Everything is deterministic (a seeded
// generator makes the random ranges), so rerunning it with the same npm
// gives byte-identical files.
//
// The modules are required from the npm that ships with node, by absolute
// path, because that is the code that decides what `npm install` picks.
'use strict'

const fs = require('fs')
const path = require('path')

const NPM = process.env.NPM_DIR || '/usr/lib/node_modules/npm'
const mod = (name) => path.join(NPM, 'node_modules', name)
const semver = require(mod('semver'))
const pickManifest = require(mod('npm-pick-manifest'))
const npa = require(mod('npm-package-arg'))
const validateName = require(mod('validate-npm-package-name'))
const version = (name) => require(path.join(mod(name), 'package.json')).version

// Versions every range is tested against. Valid ones, prereleases around
// the boundaries the desugared ranges use (X.Y.Z-0), build metadata, loose
// forms (v, =, leading zeros, prerelease without hyphen) and junk.
const versions = [
  '0.0.0', '0.0.1', '0.0.2', '0.0.3-pre', '0.0.3', '0.0.4',
  '0.1.0', '0.1.1', '0.1.2', '0.2.0', '0.2.3', '0.9.0-alpha',
  '1.0.0-0', '1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta',
  '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0', '1.0.1', '1.1.0',
  '1.2.0', '1.2.2', '1.2.3-alpha', '1.2.3-beta.2', '1.2.3-beta.10',
  '1.2.3', '1.2.3+build.5', '1.2.4-alpha.notready', '1.2.4', '1.2.5',
  '1.3.0-0', '1.3.0', '1.9.9', '1.10.0', '2.0.0-0', '2.0.0-alpha',
  '2.0.0', '2.0.1', '2.1.0', '2.5.0-rc.1', '3.0.0', '3.4.5', '3.4.6-0',
  '3.5.0-0', '3.5.0', '4.0.0-beta', '10.0.0', '9007199254740991.0.0',
  'v1.2.3', '=1.2.3', 'v2.0.0-alpha', '  1.2.5  ', '1.2.3beta', '01.2.3',
  '1.02.3', '1.2.3-01', '1.2.3-x.01', '1.2', '1', '1.2.3.4', '1.2.3-',
  'x', 'not-a-version', '', '9007199254740992.0.0',
]

// Hand-picked ranges: one per feature of range.js.
const handRanges = [
  '', '*', 'x', 'X', '*.*', 'x.x.x', '>=0.0.0', '>=0.0.0-0', '<0.0.0-0',
  '^1.2.3', '^1.2', '^1', '^1.x', '^1.2.x', '^0.2.3', '^0.2', '^0.0.3',
  '^0.0', '^0', '^0.0.x', '^0.x', '^1.2.3-beta.2', '^0.0.1-pre', '^0.1.2-rc',
  '^*', '^ 1.2.3', '^1.2.3+build',
  '~1.2.3', '~1.2', '~1', '~1.x', '~0.0.1', '~0.0', '~>1.2.3', '~> 1.2',
  '~1.2.3-beta.2', '~*', '~ 1.2.3',
  '1.x', '1.2.x', '1.X', '1.*', '2.*.*', 'x.1', '1.x.3', '*.1',
  '>1', '>1.2', '>=1.2', '<1.2', '<=1.2', '<=1.x', '>1.x', '<1.x', '<=0.7.x',
  '>*', '<*', '>=*', '=1.x', '=*',
  '1.2.3', '=1.2.3', 'v1.2.3', '=v1.2.3', '1.2.3+build.5', '>=1.2.3+build',
  '>1.2.3', '>=1.2.3', '<1.2.3', '<=1.2.3', '> 1.2.3', '>= 1.2', '<  2',
  '>=1.2.3-alpha <2', '>=1.2.3-beta.2 <1.2.4', '>1.0.0-alpha <1.0.0',
  '>=2.0.0-0', '<2.0.0-0', '<=2.0.0-alpha', '>=1.0.0-beta.2 <=1.0.0-rc.1',
  '1.2.3 - 2.0.0', '1.2 - 3.4.5', '1.2.3 - 3.4', '1.2 - 3.4', '1 - 2',
  '1.2.3-alpha - 1.2.3', '1.2.3 - 2.0.0-alpha', '* - 2', '1.x - 2.x',
  '1.2.3 -2.0.0', '1.2.3- 2.0.0', '1.2.3 - 2.0.0 - 3',
  '1.2.3 || 2.0.0', '^1.0.0 || ^2.0.0', '~1.2 || >=3', '1.x || >=2.5.0 || 5.0.0 - 7.2.3',
  '|| 1.2.3', '1.2.3 ||', '||', '<0.0.0-0 || 1.x', '* || 1.2.3',
  '>=1.0.0 <1.0.0', '>2 <1', '>=1.2.3 >=1.2.3', '1.2.3 1.2.3', '* 1.2.3',
  '>=1.2.3 <2.0.0 || >=3.0.0 <4.0.0', '>=1 <=1', '<=1.2.3 >=1.2.3',
  '1.2.3beta', '>=1.2.3beta', '~01.2.3', '^00.1.2', '^01.2.3', '1.2.3-01',
  '>=01.02.03', 'x.x.x-beta', '1.x.x-alpha', '1.2.x-beta', '1.2.3 foo',
  'foo || 1.x', 'latest', 'next', 'beta', 'v', '=', '>', '>=', '~', '^',
  '=>1', '=<1', '==1.2.3', '!1.2.3', '1.2.3.4', '1.2.3-', '^1.2.3-',
  '^9007199254740991', '>9007199254740991.0.0', '9007199254740992',
  '1.2.3\t- 2', ' \t ^1.2.3 \n', '^1.2.3\u00a0', '\u3000>=1 <2',
  '^00.1', '~00.1', '^00', '<=00.x', '>01.2', '1.02 - 3', '<=1000000000000000000000.x || 1.2.3',
  '^1000000000000000000000.x || 2', '>99999999999999999999.x', '~9007199254740991.x',
  '1.2.x-' + 'a'.repeat(300), '^1.2.3-' + 'a'.repeat(251), '>=1.2.3-' + 'a'.repeat(250),
  '1.2.3+' + 'b'.repeat(300) + ' - 2', '1.0.0-9007199254740993 - 2',
  'a.b.c', '1.2.3-+', '^1.2.3+', '1.2.3 || foo', '>=x', '<=x', '>X.1',
]

// A tiny seeded generator so the random ranges are the same every run.
let seed = 0x2545f491
const rnd = (n) => {
  seed ^= seed << 13; seed >>>= 0
  seed ^= seed >>> 17
  seed ^= seed << 5; seed >>>= 0
  return seed % n
}
const pick = (a) => a[rnd(a.length)]

const ops = ['', '', '', '=', '>', '>=', '<', '<=', '~', '~>', '^', '^', 'v', '>= ', '^ ']
const nums = ['0', '0', '1', '1', '2', '3', '10', 'x', 'X', '*']
const pres = ['', '', '', '', '-0', '-alpha', '-beta.2', '-rc.1', '-alpha.notready']
const builds = ['', '', '', '', '', '+b1']
const partial = () => {
  const n = 1 + rnd(3)
  const parts = []
  for (let i = 0; i < n; i++) parts.push(pick(nums))
  let s = parts.join('.')
  if (n === 3) s += pick(pres)
  return s + pick(builds)
}
const comparatorSet = () => {
  if (rnd(6) === 0) return `${partial()} - ${partial()}`
  const n = 1 + rnd(3)
  const c = []
  for (let i = 0; i < n; i++) c.push(pick(ops) + partial())
  return c.join(' ')
}
const randomRange = () => {
  const n = 1 + (rnd(4) === 0 ? 1 + rnd(2) : 0)
  const s = []
  for (let i = 0; i < n; i++) s.push(comparatorSet())
  return s.join(rnd(2) ? ' || ' : '||')
}
const randomRanges = []
for (let i = 0; i < 300; i++) randomRanges.push(randomRange())

const ranges = [...new Set([...handRanges, ...randomRanges])]

const cases = []
for (const loose of [false, true]) {
  for (const r of ranges) {
    cases.push({
      range: r,
      loose,
      validRange: semver.validRange(r, { loose }),
      satisfies: versions.map(v => semver.satisfies(v, r, { loose }) ? '1' : '0').join(''),
      maxSatisfying: semver.maxSatisfying(versions, r, { loose }),
    })
  }
}

// Version parsing: the versions above plus a few more malformed ones.
const parseInputs = [...versions,
  '1.2.3-alpha..1', '1.2.3-alpha.', '1.2.3+', '1.2.3+a..b', '-1.2.3',
  'v v1.2.3', '==1.2.3', ' =v1.2.3', '1.2.3-0alpha', '1.2.3-alpha-1',
  '1.2.3---', '1.2.3-9007199254740992', '1.2.3-9007199254740991',
  '1.2.3-' + 'a'.repeat(250), '1.2.3-' + 'a'.repeat(251),
  '1.2.3+' + 'b'.repeat(251), '1.' + '2'.repeat(257) + '.3',
  '\u00a01.2.3', '1.2.3\ufeff', '1.2.3\u200b', '=v=v1.2.3', ' v=1.2.3-beta ',
  'vv1.2.3', '= 1.2.3', '=1.2.3+b', '0.0.00.00001000000000000000000000000000',
]
const valid = parseInputs.map(v => ({
  input: v,
  strict: semver.valid(v),
  loose: semver.valid(v, { loose: true }),
  clean: semver.clean(v, { loose: true }),
}))

// Compare: every ordered pair of loosely valid versions, as one row of
// '<', '=', '>' per left-hand version.
const comparable = [...new Set(versions.filter(v => semver.valid(v, { loose: true })).concat([
  '1.0.0-alpha.1', '1.0.0-alpha.a', '1.0.0-1', '1.0.0-a', '1.0.0-alpha.9007199254740993',
  '1.0.0-alpha.9007199254740992', '1.0.0-2.a', '1.0.0-10', '1.0.0-x.y.z',
]))]
const sign = (n) => n < 0 ? '<' : n > 0 ? '>' : '='
const compare = {
  versions: comparable,
  rows: comparable.map(a => comparable.map(b => sign(semver.compare(a, b, { loose: true }))).join('')),
}

// npm-pick-manifest: made-up packuments, no engines, no publish times, so
// only the dist-tag / deprecated / semver rules are exercised.
const manifest = (v, deprecated) => deprecated
  ? { name: 'p', version: v, deprecated: 'do not use' }
  : { name: 'p', version: v }
// Each packument is kept as an ordered list too: the order of the versions
// object is the tie-break between versions of equal precedence.
const packument = (list, tags) => {
  const versionsObj = {}
  for (const [v, dep] of list) versionsObj[v] = manifest(v, dep)
  return { name: 'p', 'dist-tags': tags, versions: versionsObj, list: list.map(([v, dep]) => [v, !!dep]) }
}
const packuments = {
  plain: packument([['1.0.0'], ['1.1.0'], ['1.2.0', true], ['2.0.0-beta.1'], ['2.0.0', true], ['2.1.0']],
    { latest: '1.1.0', next: '2.0.0-beta.1', old: '1.0.0', dep: '1.2.0' }),
  latestDeprecated: packument([['1.0.0'], ['1.1.0', true], ['1.2.0', true], ['0.9.0']],
    { latest: '1.1.0' }),
  latestPrerelease: packument([['1.0.0'], ['2.0.0-rc.1'], ['2.0.0-rc.2']],
    { latest: '2.0.0-rc.2' }),
  noLatest: packument([['0.1.0'], ['0.2.0'], ['0.3.0-alpha']], { beta: '0.3.0-alpha' }),
  danglingTag: packument([['1.0.0']], { latest: '1.0.0', gone: '9.9.9' }),
  allDeprecated: packument([['1.0.0', true], ['1.5.0', true], ['2.0.0', true]], { latest: '2.0.0' }),
  onlyPrereleases: packument([['1.0.0-alpha'], ['1.0.0-beta']], { latest: '1.0.0-beta' }),
  latestAbove: packument([['1.0.0'], ['1.5.0'], ['3.0.0']], { latest: '1.0.0' }),
  looseKeys: packument([['1.0.0'], ['1.2.3beta'], ['v1.3.0'], ['1.3.0+build'], ['junk']],
    { latest: 'junk' }),
  equalPrecedence: packument([['2.0.0+b'], ['2.0.0'], ['1.0.0']], { latest: '1.0.0' }),
  empty: packument([], {}),
}
const wanted = [
  'latest', 'next', 'old', 'dep', 'beta', 'gone', 'nope',
  '*', 'x', '>=0', '1.0.0', 'v1.0.0', '=1.1.0', '1.2.0', '2.0.0-beta.1', '9.9.9',
  '^1.0.0', '^1.1.0', '~1.0.0', '1.x', '^2.0.0', '^2.0.0-beta.0', '>=2.0.0-rc.1',
  '2', '>=3', '<1', '^0.1.0', '0.x', '1.0.0 - 1.5.0', '>=1.2.0 || <1.0.0',
  '1.0.0-alpha - 1.0.0-beta', '1.2.3beta', '^1.2.3-beta', '1.3.0', 'v1.3.0', 'junk',
  '>=1.3.0', '2.0.0', '^2',
]
const pick_ = []
for (const [name, p] of Object.entries(packuments)) {
  for (const w of wanted) {
    let result = null
    let error = null
    try {
      const { list, ...real } = p
      result = pickManifest(real, w).version
    } catch (er) {
      error = er.code
    }
    pick_.push({ packument: name, wanted: w, result, error })
  }
}

const out = {
  generator: 'internal/semver/testdata/gen.js',
  semver: version('semver'),
  npmPickManifest: version('npm-pick-manifest'),
  versions,
  ranges: cases,
  valid,
  compare,
  packuments,
  pickManifest: pick_,
}
fs.writeFileSync(path.join(__dirname, 'vectors.json'), JSON.stringify(out, null, 1) + '\n')

// npm-package-arg and validate-npm-package-name, for internal/npmspec.
const specs = [
  'latest', 'next', 'beta', 'canary', 'v1', 'x', 'X', '*', '1', '1.2', '1.2.3',
  'v1.2.3', '=1.2.3', ' 1.2.3 ', '1.2.3beta', '01.2.3', '1.2.3+build',
  '^1.2.0', '~1', '1.x', '>=2 <3', '1.2.3 - 2.0.0', '1 || 2', '>= 1.2',
  '1.2.3 foo', 'foo bar', 'foo||bar', 'tag-with-dash', 'tag_underscore',
  'tag.dot', 'Tag', "it's", 'a~b', 'a!b', 'a(b)', 'a*b', '~', '^', '>',
  'git+ssh://git@example.com/a/b.git', 'git+https://example.com/a/b.git',
  'https://example.com/a.tgz', 'http://example.com/a', 'git://example.com/a.git',
  'file:../x', 'file:x', '../x', './x', '/abs/x', '~/x', 'x.tgz', 'x.tar.gz',
  'x.tar', 'npm:other@1', 'npm:@s/o@^2', 'workspace:*', 'workspace:^1', 'link:../x',
  'user/repo', 'user/repo#v1', 'github:u/r', 'gitlab:u/r', 'bitbucket:u/r',
  'gist:123', 'git@github.com:u/r.git', 'a:b', 'a@b', 'a/b', 'a#b', 'a?b',
  'a%20b', 'a\\b', 'ümlaut', 'C:\\x', 'c:x', '.hidden', '_under', '-dash',
  'tag/with/slash', 'a b', '\tlatest', 'latest\n', '1.2.3 ||', '||',
]
const npaVectors = specs.map(s => {
  try {
    const r = npa.resolve('foo', s, '/tmp')
    // fetchSpec only for registry specs: for files it is a path under
    // the home or working directory, which differs between machines.
    const registry = ['version', 'range', 'tag'].includes(r.type)
    return { spec: s, type: r.type, fetchSpec: registry ? r.fetchSpec : null }
  } catch (er) {
    return { spec: s, type: null, error: er.code || er.message }
  }
})

const names = [
  'react', '@types/react', 'JSONStream', 'CamelCase', 'lodash.debounce',
  'a', 'a-b', 'a_b', 'a.b', 'a..b', '..', '.', '.bin', '_foo', '-foo',
  '@scope/.dot', '@scope/_under', '@.scope/x', '@_scope/x', '@/x', '@scope/',
  '@scope', '@scope/a/b', 'a/b', ' a', 'a ', 'a b', 'node_modules',
  'NODE_MODULES', 'favicon.ico', '@scope/node_modules', 'http', 'fs',
  "it's", 'a~b', 'a!b', 'a(b)', 'a*b', 'a@b', 'a%b', 'a:b', 'a?b', 'a#b',
  'ümlaut', '', 'x'.repeat(214), 'x'.repeat(215), '@s/' + 'x'.repeat(211),
  '@s/' + 'x'.repeat(212), '@scope/a%2Fb', '@sc ope/x', 'a\nb', 'a\u0000b',
  '@@scope/x', '@scope@x/y',
]
const nameVectors = names.map(n => {
  const v = validateName(n)
  return { name: n, validForOldPackages: v.validForOldPackages, errors: v.errors || [] }
})

const npmspecDir = path.join(__dirname, '..', '..', 'npmspec', 'testdata')
fs.mkdirSync(npmspecDir, { recursive: true })
fs.writeFileSync(path.join(npmspecDir, 'npa.json'), JSON.stringify({
  generator: 'internal/semver/testdata/gen.js',
  npmPackageArg: version('npm-package-arg'),
  validateNpmPackageName: version('validate-npm-package-name'),
  specs: npaVectors,
  names: nameVectors,
}, null, 1) + '\n')

let sat = 0
for (const c of cases) sat += c.satisfies.length
console.log(`semver ${out.semver}: ${cases.length} ranges, ${sat} satisfies vectors, ` +
  `${valid.length} valid, ${comparable.length ** 2} compare, ${pick_.length} pick-manifest; ` +
  `${npaVectors.length} specs, ${nameVectors.length} names`)

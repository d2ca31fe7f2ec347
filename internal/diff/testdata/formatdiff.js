// Reads cases as JSON on stdin and prints, for each, what libnpmdiff's
// format-diff.js (the code behind `npm diff`) makes of them, as a JSON
// array of strings. Run by lines_test.go with NODE_PATH set to npm's own
// node_modules, so it exercises the npm installed on this machine.
const formatDiff = require('libnpmdiff/lib/format-diff.js')
let input = ''
process.stdin.on('data', d => { input += d })
process.stdin.on('end', async () => {
  const cases = JSON.parse(input)
  const out = []
  for (const c of cases) {
    const files = new Set()
    const refs = new Map()
    for (const side of ['a', 'b']) {
      for (const f of c[side]) {
        files.add(f.path)
        refs.set(`${side}/${f.path}`, { content: Buffer.from(f.body, 'base64').toString('utf8'), mode: f.mode })
      }
    }
    out.push(await formatDiff({ files, refs, opts: c.opts, versions: { a: '1.0.0', b: '1.0.1' } }))
  }
  process.stdout.write(JSON.stringify(out))
})

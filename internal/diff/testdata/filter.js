// Reads {args: [[...]], paths: [...]} on stdin and prints, per argument
// list, which paths libnpmdiff's untar.js filter keeps (its fileMatch and
// folderMatch, copied verbatim, on "package/<path>"), using npm's own
// minimatch through NODE_PATH.
const { minimatch } = require('minimatch')
const normalizeMatch = str => str
  .replace(/\\+/g, '/')
  .replace(/^\.\/|^\./, '')
let input = ''
process.stdin.on('data', d => { input += d })
process.stdin.on('end', () => {
  const { args, paths } = JSON.parse(input)
  const out = args.map(filterFiles => paths.map(p => {
    const path = 'package/' + p
    const fileMatch = () =>
      (!filterFiles.length ||
        filterFiles.some(f => {
          const pattern = normalizeMatch(f)
          return minimatch(
            normalizeMatch(path),
            `{package/,}${pattern}`,
            { matchBase: pattern.startsWith('*') }
          )
        }))
    const folderMatch = () =>
      filterFiles.some(f =>
        normalizeMatch(path).startsWith(normalizeMatch(f)) ||
        normalizeMatch(path).startsWith(`package/${normalizeMatch(f)}`))
    return fileMatch() || folderMatch()
  }))
  process.stdout.write(JSON.stringify(out))
})

// Package licence checks that every module pkgscope requires may be
// shipped inside a commercial, closed deployment: its test reads each
// go.mod module's licence files from the module cache, classifies them
// with github.com/google/licensecheck, and fails on a copyleft or
// unrecognised licence, or when docs/DEPENDENCIES.md's "Licences" table
// does not list exactly go.mod's modules with the licences found.
package licence

package webdocs

import (
	"strings"
	"testing"
)

func TestParseIDLDefinitions(t *testing.T) {
	src := `// GENERATED CONTENT - DO NOT EDIT
// Source: Test Spec (https://example.com/spec/)

[Exposed=(Window,Worker), SecureContext]
interface Thing : EventTarget {
  constructor(optional ThingInit init = {});
  static Thing create(DOMString name);
  readonly attribute unrestricted double size;
  [SameObject] readonly attribute FrozenArray<Thing> parts;
  attribute EventHandler onchange;
  const unsigned short KIND = 1;
  Promise<sequence<Thing>> list((DOMString or Thing) key, record<DOMString, any> opts);
  getter any (DOMString name);
  setter undefined (DOMString name, any value);
  getter Thing? item(unsigned long index);
  iterable<DOMString, Thing>;
  stringifier;
  undefined _delete(); /* an escaped name; a ; in a comment */
};
partial interface Thing { undefined extra(); };
interface mixin Thingish { undefined mixed(); };
Thing includes Thingish;
dictionary ThingInit : BaseInit { required DOMString name; long count = 3; };
enum ThingKind { "a;b", "c" };
callback ThingCallback = undefined (Thing thing);
callback interface ThingListener { undefined handle(Thing t); };
typedef (DOMString or Thing) ThingLike;
namespace ThingTools { Thing make(); readonly attribute long made; };
[Exposed=Window] interface Map2 { readonly maplike<DOMString, long>; async iterable<long>; };
`
	f := ParseIDL("test-spec", src)
	if f.SpecTitle != "Test Spec" || f.SpecURL != "https://example.com/spec/" {
		t.Errorf("source header = %q %q", f.SpecTitle, f.SpecURL)
	}
	type def struct{ kind, name, inherits string }
	var got []def
	for _, d := range f.Definitions {
		got = append(got, def{d.Kind, d.Name, d.Inherits})
	}
	want := []def{
		{"interface", "Thing", "EventTarget"}, {"interface", "Thing", ""}, {"interface mixin", "Thingish", ""},
		{"includes", "Thing", "Thingish"}, {"dictionary", "ThingInit", "BaseInit"}, {"enum", "ThingKind", ""},
		{"callback", "ThingCallback", ""}, {"callback interface", "ThingListener", ""}, {"typedef", "ThingLike", ""},
		{"namespace", "ThingTools", ""}, {"interface", "Map2", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("definitions = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("definition %d = %v, want %v", i, got[i], want[i])
		}
	}
	if !f.Definitions[1].Partial || f.Definitions[0].Partial {
		t.Errorf("partial flags wrong: %v %v", f.Definitions[0].Partial, f.Definitions[1].Partial)
	}
	if h := f.Definitions[0].Header; h != "[Exposed=(Window,Worker), SecureContext]\ninterface Thing : EventTarget {" {
		t.Errorf("header = %q", h)
	}
	type mem struct {
		kind, name string
		static     bool
	}
	var members []mem
	for _, m := range f.Definitions[0].Members {
		members = append(members, mem{m.Kind, m.Name, m.Static})
	}
	wantMembers := []mem{
		{"constructor", "constructor", false}, {"operation", "create", true}, {"attribute", "size", false},
		{"attribute", "parts", false}, {"attribute", "onchange", false}, {"const", "KIND", false},
		{"operation", "list", false}, {"operation", "", false}, {"operation", "", false}, {"operation", "item", false},
		{"iterable", "", false}, {"stringifier", "", false}, {"operation", "delete", false},
	}
	if len(members) != len(wantMembers) {
		t.Fatalf("members = %v\nwant %v", members, wantMembers)
	}
	for i := range wantMembers {
		if members[i] != wantMembers[i] {
			t.Errorf("member %d = %v, want %v (%q)", i, members[i], wantMembers[i], f.Definitions[0].Members[i].Text)
		}
	}
	if txt := f.Definitions[0].Members[3].Text; txt != "readonly attribute FrozenArray<Thing> parts" {
		t.Errorf("extended attributes not cut from a member: %q", txt)
	}
	dict := f.Definitions[4]
	if len(dict.Members) != 2 || dict.Members[0].Name != "name" || dict.Members[1].Name != "count" || dict.Members[0].Kind != "field" {
		t.Errorf("dictionary members = %+v", dict.Members)
	}
	ns := f.Definitions[9]
	if len(ns.Members) != 2 || ns.Members[0].Name != "make" || ns.Members[1].Name != "made" {
		t.Errorf("namespace members = %+v", ns.Members)
	}
	m2 := f.Definitions[10]
	if len(m2.Members) != 2 || m2.Members[0].Kind != "maplike" || m2.Members[1].Kind != "iterable" {
		t.Errorf("maplike/async iterable = %+v", m2.Members)
	}
}

// A definition the reader cannot name is skipped, not fatal: the rest of
// the file still parses.
func TestParseIDLSkipsNonsense(t *testing.T) {
	f := ParseIDL("odd", "garbage here; interface {}; interface 9x {}; partial; interface Ok { undefined f(); };")
	var names []string
	for _, d := range f.Definitions {
		names = append(names, d.Name)
	}
	if strings.Join(names, ",") != "Ok" {
		t.Errorf("definitions = %v, want only Ok", names)
	}
}

func TestStripComments(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a // c\nb", "a \nb"},
		{"a /* x */ b", "a   b"},
		{`"//not" x`, `"//not" x`},
		{"a /* unterminated", "a "},
		{"a // last line", "a "},
	} {
		if got := stripComments(tc.in); got != tc.want {
			t.Errorf("stripComments(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzParseIDL(f *testing.F) {
	f.Add("interface A { constructor(); undefined f(long x); readonly attribute long y; };")
	f.Add("[Exposed=Window] partial interface mixin B { getter any (DOMString n); };\nA includes B;")
	f.Add("dictionary D { required long x = 1; }; enum E { \"a\" }; callback C = undefined ();")
	f.Add("/* ; */ // ;\n\"unterminated")
	f.Fuzz(func(t *testing.T, src string) {
		file := ParseIDL("fuzz", src)
		for _, d := range file.Definitions {
			if d.Name == "" || d.Kind == "" {
				t.Fatalf("unnamed definition %+v from %q", d, src)
			}
			for _, m := range d.Members {
				if m.Kind == "" || m.Text == "" {
					t.Fatalf("empty member %+v from %q", m, src)
				}
			}
		}
	})
}

// TestWholeInterfaceCutNamesItsMixins: an interface's IDL cut at the
// budget inside its mixins' text still names every mixin it includes.
func TestWholeInterfaceCutNamesItsMixins(t *testing.T) {
	x := newIDLIndex([]IDLFile{ParseIDL("html", `interface Window { undefined alert(); };
Window includes WindowOrWorkerGlobalScope;
Window includes AnimationFrameProvider;
interface mixin WindowOrWorkerGlobalScope { `+strings.Repeat("undefined f(); ", 100)+` };
interface mixin AnimationFrameProvider { unsigned long requestAnimationFrame(FrameRequestCallback callback); };`)})
	full, _ := x.render(idlTarget{Interface: "Window"}, 1<<20)
	if !strings.Contains(full, "requestAnimationFrame") {
		t.Fatalf("uncut IDL lacks the second mixin's member:\n%s", full)
	}
	cut, _ := x.render(idlTarget{Interface: "Window"}, 400)
	for _, want := range []string{"Window includes AnimationFrameProvider;", "Window includes WindowOrWorkerGlobalScope;", "IDL cut at 400 bytes (setting webdocs-max-doc-bytes)"} {
		if !strings.Contains(cut, want) {
			t.Errorf("cut IDL lacks %q:\n%s", want, cut)
		}
	}
}

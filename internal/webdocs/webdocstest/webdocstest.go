// Package webdocstest publishes tiny fixture versions of the four
// explore_web_docs data packages to a fake registry, in the same file
// layout as the real ones (data.json, index.json, one .idl per spec), and
// seeds a fake MDN with matching pages. The content is a handful of
// features: the ResizeObserver interface, its constructor and methods,
// Element.append (from a mixin), Window and its fetch (declared on the
// WindowOrWorkerGlobalScope mixin, in another spec, and keyed api.fetch
// as MDN keys it), the CSS property gap, a redirect, an external redirect
// and a moved web-features feature.
package webdocstest

import (
	"testing"

	"github.com/pkgscope/pkgscope/internal/fakeregistry"
	"github.com/pkgscope/pkgscope/internal/tarballtest"
	"github.com/pkgscope/pkgscope/internal/webdocs"
	"github.com/pkgscope/pkgscope/internal/webdocs/fakemdn"
)

// Versions are the fixture packages' versions.
func Versions() webdocs.Versions {
	return webdocs.Versions{BCD: "1.0.0", Inventory: "0.1.0", IDL: "1.0.0", Features: "1.0.0"}
}

// Publish publishes the four fixture packages to reg and returns their
// versions.
func Publish(t testing.TB, reg *fakeregistry.Registry) webdocs.Versions {
	t.Helper()
	v := Versions()
	reg.Publish(webdocs.PackageBCD, v.BCD, tarballtest.Package(t, map[string]string{
		"package.json": `{"name":"@mdn/browser-compat-data","version":"1.0.0","main":"data.json"}`,
		"data.json":    BCD,
		"README.md":    "# fixture BCD\n",
	}))
	reg.Publish(webdocs.PackageInventory, v.Inventory, tarballtest.Package(t, map[string]string{
		"package.json": `{"name":"@ddbeck/mdn-content-inventory","version":"0.1.0","main":"index.mjs","type":"module"}`,
		"index.json":   Inventory,
		"index.mjs":    "export default {};\n",
	}))
	reg.Publish(webdocs.PackageIDL, v.IDL, tarballtest.Package(t, map[string]string{
		"package.json":        `{"name":"@webref/idl","version":"1.0.0","main":"index.js"}`,
		"index.js":            "module.exports = {};\n",
		"README.md":           "# fixture IDL\n",
		"resize-observer.idl": ResizeObserverIDL,
		"dom.idl":             DOMIDL,
		"cssom-view.idl":      CSSOMViewIDL,
		"html.idl":            HTMLIDL,
		"fetch.idl":           FetchIDL,
	}))
	reg.Publish(webdocs.PackageFeatures, v.Features, tarballtest.Package(t, map[string]string{
		"package.json": `{"name":"web-features","version":"1.0.0","main":"index.js"}`,
		"data.json":    Features,
		"index.js":     "export {};\n",
	}))
	return v
}

// SeedMDN adds the fixture's pages to a fake MDN: the ResizeObserver
// interface and constructor pages with prose, and the gap page.
func SeedMDN(m *fakemdn.Server) {
	m.AddPage("/en-US/docs/Web/API/ResizeObserver", fakemdn.Page{
		Title: "ResizeObserver", PageType: "web-api-interface", BrowserCompat: []string{"api.ResizeObserver"},
		Summary: "The ResizeObserver interface reports changes to the dimensions of an Element's content or border box.",
		Body: []fakemdn.Section{
			{Type: "prose", Content: `<p>The <strong><code>ResizeObserver</code></strong> interface reports changes to the dimensions of an <a href="/en-US/docs/Web/API/Element"><code>Element</code></a>'s content or border box.</p>`},
			{Type: "prose", Title: "Constructor", Content: `<dl><dt><a href="/en-US/docs/Web/API/ResizeObserver/ResizeObserver"><code>ResizeObserver()</code></a></dt><dd><p>Creates and returns a new <code>ResizeObserver</code> object.</p></dd></dl>`},
			{Type: "browser_compatibility", Title: "Browser compatibility", Query: "api.ResizeObserver"},
		},
	})
	m.AddPage("/en-US/docs/Web/API/ResizeObserver/ResizeObserver", fakemdn.Page{
		Title: "ResizeObserver: ResizeObserver() constructor", PageType: "web-api-constructor",
		BrowserCompat: []string{"api.ResizeObserver.ResizeObserver"},
		Summary:       "The ResizeObserver() constructor creates a new ResizeObserver object, which can be used to report changes to the content or border box of an Element or the bounding box of an SVGElement.",
		Body: []fakemdn.Section{
			{Type: "prose", Content: `<p>The <strong><code>ResizeObserver()</code></strong> constructor creates a new <a href="/en-US/docs/Web/API/ResizeObserver"><code>ResizeObserver</code></a> object.</p>`},
			{Type: "prose", Title: "Syntax", Content: `<pre class="brush: js notranslate">new ResizeObserver(callback)
</pre>`},
			{Type: "prose", Title: "Parameters", IsH3: true, Content: `<dl><dt><code>callback</code></dt><dd><p>The function called whenever an observed resize occurs. It is called with two parameters:</p><ul><li><code>entries</code>: an array of <code>ResizeObserverEntry</code> objects</li><li><code>observer</code>: the observer itself</li></ul></dd></dl>`},
			{Type: "prose", Title: "Examples", Content: `<div class="notecard note"><p><strong>Note:</strong> callbacks run after layout.</p></div><table><thead><tr><th>Box</th><th>Meaning</th></tr></thead><tbody><tr><td><code>content-box</code></td><td>the content area</td></tr></tbody></table>`},
			{Type: "specifications", Title: "Specifications", Query: "api.ResizeObserver.ResizeObserver", Specs: []fakemdn.Spec{{URL: "https://drafts.csswg.org/resize-observer/#dom-resizeobserver-resizeobserver", Title: "Resize Observer"}}},
			{Type: "browser_compatibility", Title: "Browser compatibility", Query: "api.ResizeObserver.ResizeObserver"},
		},
	})
	m.AddPage("/en-US/docs/Web/CSS/Reference/Properties/gap", fakemdn.Page{
		Title: "gap", PageType: "css-shorthand-property", BrowserCompat: []string{"css.properties.gap"},
		Summary: "The gap CSS shorthand property sets the gaps (gutters) between rows and columns.",
		Body:    []fakemdn.Section{{Type: "prose", Content: `<p>The <strong><code>gap</code></strong> CSS shorthand property sets the gaps between rows and columns.</p>`}},
	})
}

// support is a compact support block shared by the fixture features.
const support = `{
	"chrome": {"version_added": "64"},
	"chrome_android": {"version_added": "64"},
	"edge": {"version_added": "79"},
	"firefox": {"version_added": "69"},
	"firefox_android": {"version_added": "79"},
	"ie": {"version_added": false},
	"safari": {"version_added": "13.1"},
	"safari_ios": {"version_added": "13.4"}
}`

const standard = `{"deprecated": false, "experimental": false, "standard_track": true}`

// BCD is the fixture data.json of @mdn/browser-compat-data.
const BCD = `{
"__meta": {"version": "1.0.0", "timestamp": "2026-02-01T00:00:00.000Z"},
"api": {
	"ResizeObserver": {
		"__compat": {
			"mdn_url": "https://developer.mozilla.org/docs/Web/API/ResizeObserver",
			"source_file": "api/ResizeObserver.json",
			"spec_url": "https://drafts.csswg.org/resize-observer/#resize-observer-interface",
			"status": ` + standard + `,
			"support": ` + support + `,
			"tags": ["web-features:resize-observer"]
		},
		"ResizeObserver": {
			"__compat": {
				"description": "<code>ResizeObserver()</code> constructor",
				"mdn_url": "https://developer.mozilla.org/docs/Web/API/ResizeObserver/ResizeObserver",
				"source_file": "api/ResizeObserver.json",
				"spec_url": "https://drafts.csswg.org/resize-observer/#dom-resizeobserver-resizeobserver",
				"status": ` + standard + `,
				"support": ` + support + `,
				"tags": ["web-features:resize-observer"]
			}
		},
		"disconnect": {
			"__compat": {
				"mdn_url": "https://developer.mozilla.org/docs/Web/API/ResizeObserver/disconnect",
				"spec_url": "https://drafts.csswg.org/resize-observer/#dom-resizeobserver-disconnect",
				"status": ` + standard + `,
				"support": ` + support + `,
				"tags": ["web-features:resize-observer"]
			}
		},
		"observe": {
			"__compat": {
				"mdn_url": "https://developer.mozilla.org/docs/Web/API/ResizeObserver/observe",
				"spec_url": "https://drafts.csswg.org/resize-observer/#dom-resizeobserver-observe",
				"status": ` + standard + `,
				"support": ` + support + `,
				"tags": ["web-features:resize-observer"]
			},
			"options_box_parameter": {
				"__compat": {
					"description": "<code>options.box</code> parameter",
					"status": ` + standard + `,
					"support": {"chrome": {"version_added": "84"}, "firefox": {"version_added": "69"}, "safari": {"version_added": "15.4"}}
				}
			}
		}
	},
	"ResizeObserverEntry": {
		"__compat": {
			"mdn_url": "https://developer.mozilla.org/docs/Web/API/ResizeObserverEntry",
			"spec_url": "https://drafts.csswg.org/resize-observer/#resize-observer-entry-interface",
			"status": ` + standard + `,
			"support": ` + support + `,
			"tags": ["web-features:resize-observer"]
		}
	},
	"Element": {
		"__compat": {
			"mdn_url": "https://developer.mozilla.org/docs/Web/API/Element",
			"spec_url": "https://dom.spec.whatwg.org/#interface-element",
			"status": ` + standard + `,
			"support": {"chrome": {"version_added": "1"}, "firefox": {"version_added": "1"}, "safari": {"version_added": "1"}}
		},
		"append": {
			"__compat": {
				"mdn_url": "https://developer.mozilla.org/docs/Web/API/Element/append",
				"spec_url": "https://dom.spec.whatwg.org/#ref-for-dom-parentnode-append①",
				"status": ` + standard + `,
				"support": {"chrome": {"version_added": "54"}, "firefox": {"version_added": "49"}, "safari": {"version_added": "10"}}
			}
		}
	}
},
"browsers": {
	"chrome": {"name": "Chrome", "type": "desktop", "releases": {"64": {"release_date": "2018-01-23", "status": "retired"}}},
	"firefox": {"name": "Firefox", "type": "desktop", "releases": {"69": {"release_date": "2019-09-03", "status": "retired"}}}
},
"css": {
	"properties": {
		"gap": {
			"__compat": {
				"mdn_url": "https://developer.mozilla.org/docs/Web/CSS/Reference/Properties/gap",
				"source_file": "css/properties/gap.json",
				"spec_url": "https://drafts.csswg.org/css-gaps-1/#gap-shorthand",
				"status": ` + standard + `,
				"support": {"chrome": {"version_added": "57"}, "firefox": {"version_added": "52"}, "safari": {"version_added": "10.1"}, "ie": {"version_added": false}},
				"tags": ["web-features:grid"]
			},
			"grid_context": {
				"__compat": {
					"description": "Supported in Grid layout",
					"status": ` + standard + `,
					"support": {"chrome": {"version_added": "66"}, "firefox": {"version_added": "61"}, "safari": {"version_added": "12"}}
				}
			}
		},
		"row-gap": {
			"__compat": {
				"mdn_url": "https://developer.mozilla.org/docs/Web/CSS/Reference/Properties/row-gap",
				"spec_url": "https://drafts.csswg.org/css-gaps-1/#row-gap",
				"status": ` + standard + `,
				"support": {"chrome": {"version_added": "66"}, "firefox": {"version_added": "61"}, "safari": {"version_added": "12"}}
			}
		}
	}
}
}`

// Inventory is the fixture index.json of @ddbeck/mdn-content-inventory.
const Inventory = `{
"metadata": {"commit": "0123456789abcdef", "commitShort": "0123456789", "authorDate": "2026-02-05T16:58:35+00:00[UTC]"},
"inventory": [
	{"path": "/files/en-us/glossary/api/index.md", "frontmatter": {"title": "API", "slug": "Glossary/API", "page-type": "glossary-definition", "sidebar": "glossarysidebar"}},
	{"path": "/files/en-us/web/api/resize_observer_api/index.md", "frontmatter": {"title": "Resize Observer API", "slug": "Web/API/Resize_Observer_API", "page-type": "web-api-overview", "browser-compat": "api.ResizeObserver", "spec-urls": "https://drafts.csswg.org/resize-observer/"}},
	{"path": "/files/en-us/web/api/resizeobserver/observe/index.md", "frontmatter": {"title": "ResizeObserver: observe() method", "short-title": "observe()", "slug": "Web/API/ResizeObserver/observe", "page-type": "web-api-instance-method", "browser-compat": "api.ResizeObserver.observe"}},
	{"path": "/files/en-us/web/api/resizeobserver/resizeobserver/index.md", "frontmatter": {"title": "ResizeObserver: ResizeObserver() constructor", "short-title": "ResizeObserver()", "slug": "Web/API/ResizeObserver/ResizeObserver", "page-type": "web-api-constructor", "browser-compat": "api.ResizeObserver.ResizeObserver"}},
	{"path": "/files/en-us/web/api/resizeobserverentry/index.md", "frontmatter": {"title": "ResizeObserverEntry", "slug": "Web/API/ResizeObserverEntry", "page-type": "web-api-interface", "browser-compat": "api.ResizeObserverEntry"}},
	{"path": "/files/en-us/web/api/resizeobserver/index.md", "frontmatter": {"title": "ResizeObserver", "slug": "Web/API/ResizeObserver", "page-type": "web-api-interface", "browser-compat": "api.ResizeObserver"}},
	{"path": "/files/en-us/web/api/resizeobserver/disconnect/index.md", "frontmatter": {"title": "ResizeObserver: disconnect() method", "short-title": "disconnect()", "slug": "Web/API/ResizeObserver/disconnect", "page-type": "web-api-instance-method", "browser-compat": "api.ResizeObserver.disconnect"}},
	{"path": "/files/en-us/web/api/element/append/index.md", "frontmatter": {"title": "Element: append() method", "short-title": "append()", "slug": "Web/API/Element/append", "page-type": "web-api-instance-method", "browser-compat": "api.Element.append"}},
	{"path": "/files/en-us/web/api/element/index.md", "frontmatter": {"title": "Element", "slug": "Web/API/Element", "page-type": "web-api-interface", "browser-compat": "api.Element"}},
	{"path": "/files/en-us/web/api/window/index.md", "frontmatter": {"title": "Window", "slug": "Web/API/Window", "page-type": "web-api-interface", "browser-compat": "api.Window"}},
	{"path": "/files/en-us/web/api/window/fetch/index.md", "frontmatter": {"title": "Window: fetch() method", "short-title": "fetch()", "slug": "Web/API/Window/fetch", "page-type": "web-api-instance-method", "browser-compat": "api.fetch"}},
	{"path": "/files/en-us/web/css/reference/properties/gap/index.md", "frontmatter": {"title": "gap", "slug": "Web/CSS/Reference/Properties/gap", "page-type": "css-shorthand-property", "browser-compat": "css.properties.gap", "sidebar": "cssref"}},
	{"path": "/files/en-us/web/css/reference/properties/row-gap/index.md", "frontmatter": {"title": "row-gap", "slug": "Web/CSS/Reference/Properties/row-gap", "page-type": "css-property", "browser-compat": "css.properties.row-gap", "sidebar": "cssref"}},
	{"path": "/files/en-us/web/javascript/reference/errors/arguments_not_allowed/index.md", "frontmatter": {"title": "SyntaxError: arguments is not valid in fields", "slug": "Web/JavaScript/Reference/Errors/Arguments_not_allowed", "page-type": "javascript-error", "sidebar": "jssidebar"}},
	{"path": "/files/en-us/web/javascript/reference/errors/bad_await/index.md", "frontmatter": {"title": "SyntaxError: await is only valid in async functions, async generators and modules", "slug": "Web/JavaScript/Reference/Errors/Bad_await", "page-type": "javascript-error", "sidebar": "jssidebar"}},
	{"path": "/files/en-us/mozilla/firefox/releases/69/index.md", "frontmatter": {"title": "Firefox 69 release notes for developers", "short-title": "Firefox 69", "slug": "Mozilla/Firefox/Releases/69", "page-type": "firefox-release-notes", "sidebar": "firefox"}},
	{"path": "/files/en-us/web/api/document/width/index.md", "frontmatter": {"title": "Document: width property", "short-title": "width", "slug": "Web/API/Document/width", "page-type": "web-api-instance-property", "status": ["deprecated", "non-standard"], "browser-compat": "api.Document.width"}}
],
"redirects": {
	"/en-US/docs/Web/CSS/gap": "/en-US/docs/Web/CSS/Reference/Properties/gap",
	"/en-US/docs/Web/CSS/grid-gap": "/en-US/docs/Web/CSS/Reference/Properties/gap",
	"/en-US/docs/Web/API/ResizeObserver/ResizeObserver()": "/en-US/docs/Web/API/ResizeObserver/ResizeObserver",
	"/en-US/docs/Mozilla/Add-ons/Distribution": "https://example.com/documentation/publish/"
}
}`

// ResizeObserverIDL is the fixture resize-observer.idl.
const ResizeObserverIDL = `// GENERATED CONTENT - DO NOT EDIT
// Content was automatically extracted by Reffy into webref
// (https://github.com/w3c/webref)
// Source: Resize Observer Module Level 1 (https://drafts.csswg.org/resize-observer-1/)

enum ResizeObserverBoxOptions {
    "border-box", "content-box", "device-pixel-content-box"
};

dictionary ResizeObserverOptions {
    ResizeObserverBoxOptions box = "content-box";
};

[Exposed=(Window)]
interface ResizeObserver {
    constructor(ResizeObserverCallback callback);
    undefined observe(Element target, optional ResizeObserverOptions options = {});
    undefined unobserve(Element target);
    undefined disconnect();
};

callback ResizeObserverCallback = undefined (sequence<ResizeObserverEntry> entries, ResizeObserver observer);

[Exposed=Window]
interface ResizeObserverEntry {
    readonly attribute Element target;
    readonly attribute DOMRectReadOnly contentRect;
    readonly attribute FrozenArray<ResizeObserverSize> borderBoxSize;
};
`

// DOMIDL is the fixture dom.idl: Element and the mixin its append comes
// from.
const DOMIDL = `// GENERATED CONTENT - DO NOT EDIT
// Source: DOM Standard (https://dom.spec.whatwg.org/)

interface mixin ParentNode {
  [SameObject] readonly attribute HTMLCollection children;
  [CEReactions, Unscopable] undefined prepend((Node or DOMString)... nodes);
  [CEReactions, Unscopable] undefined append((Node or DOMString)... nodes);
};
Element includes ParentNode;

[Exposed=Window]
interface Element : Node {
  readonly attribute DOMString? namespaceURI;
  [CEReactions] attribute DOMString id;
  boolean hasAttribute(DOMString qualifiedName);
  /* a comment; with a semicolon */
  getter DOMString? (DOMString name);
};
`

// CSSOMViewIDL is the fixture cssom-view.idl: a partial Element.
const CSSOMViewIDL = `// Source: CSSOM View Module (https://drafts.csswg.org/cssom-view-1/)
partial interface Element {
  DOMRectList getClientRects();
  [NewObject] DOMRect getBoundingClientRect();
};
`

// HTMLIDL is the fixture html.idl: Window, and the mixin it takes fetch
// and setTimeout from.
const HTMLIDL = `// Source: HTML Standard (https://html.spec.whatwg.org/multipage/)
[Global=Window, Exposed=Window, LegacyUnenumerableNamedProperties]
interface Window : EventTarget {
  [LegacyUnforgeable] readonly attribute WindowProxy window;
  undefined alert(DOMString message);
};
Window includes WindowOrWorkerGlobalScope;

interface mixin WindowOrWorkerGlobalScope {
  [Replaceable] readonly attribute USVString origin;
  long setTimeout(TimerHandler handler, optional long timeout = 0, any... arguments);
};
`

// FetchIDL is the fixture fetch.idl: fetch, added to the mixin by a
// partial in another spec.
const FetchIDL = `// Source: Fetch Standard (https://fetch.spec.whatwg.org/)
partial interface mixin WindowOrWorkerGlobalScope {
  [NewObject] Promise<Response> fetch(RequestInfo input, optional RequestInit init = {});
};
`

// Features is the fixture data.json of web-features.
const Features = `{
"browsers": {"chrome": {"name": "Chrome", "releases": [{"date": "2018-01-23", "version": "64"}]}},
"features": {
	"resize-observer": {
		"kind": "feature",
		"name": "Resize observer",
		"description": "The ResizeObserver API observes and reacts to changes in the size of DOM elements.",
		"description_html": "The <code>ResizeObserver</code> API observes and reacts to changes in the size of DOM elements.",
		"spec": ["https://drafts.csswg.org/resize-observer-1/"],
		"caniuse": ["resizeobserver"],
		"compat_features": ["api.ResizeObserver", "api.ResizeObserver.ResizeObserver", "api.ResizeObserver.disconnect", "api.ResizeObserver.observe", "api.ResizeObserver.observe.options_box_parameter", "api.ResizeObserverEntry"],
		"status": {
			"baseline": "high",
			"baseline_high_date": "2023-01-28",
			"baseline_low_date": "2020-07-28",
			"support": {"chrome": "64", "chrome_android": "64", "edge": "79", "firefox": "69", "firefox_android": "79", "safari": "13.1", "safari_ios": "13.4"},
			"by_compat_key": {
				"api.ResizeObserver": {"baseline": "high", "baseline_high_date": "2023-01-28", "baseline_low_date": "2020-07-28", "support": {"chrome": "64", "chrome_android": "64", "edge": "79", "firefox": "69", "firefox_android": "79", "safari": "13.1", "safari_ios": "13.4"}},
				"api.ResizeObserver.observe.options_box_parameter": {"baseline": "low", "baseline_low_date": "2022-03-14", "support": {"chrome": "84", "edge": "84", "firefox": "69", "safari": "15.4"}}
			}
		}
	},
	"grid": {
		"kind": "feature",
		"name": "Grid",
		"description": "CSS grid is a two-dimensional layout system, which lays content out in rows and columns.",
		"description_html": "CSS grid is a two-dimensional layout system, which lays content out in rows and columns.",
		"spec": "https://drafts.csswg.org/css-grid-3/",
		"group": ["grid"],
		"compat_features": ["css.properties.gap", "css.properties.gap.grid_context"],
		"status": {"baseline": "high", "baseline_high_date": "2020-04-17", "baseline_low_date": "2017-10-17", "support": {"chrome": "66", "edge": "16", "firefox": "61", "safari": "12"}}
	},
	"append": {
		"kind": "feature",
		"name": "append() and prepend()",
		"description": "The append() and prepend() methods insert nodes at the start or end of an element's children.",
		"description_html": "",
		"spec": ["https://dom.spec.whatwg.org/"],
		"compat_features": ["api.Element.append"],
		"status": {"baseline": false, "support": {"chrome": "54", "firefox": "49"}},
		"discouraged": {"according_to": ["https://example.com/discouraged"]}
	},
	"masonry": {"kind": "moved", "redirect_target": "grid"}
},
"groups": {"grid": {"name": "Grid"}},
"snapshots": {"ecmascript-2015": {"name": "ECMAScript 2015", "spec": "https://262.ecma-international.org/6.0/"}}
}`

import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Darkroom
@testable import DarkroomServer

/// The gallery's scripts as a reader meets them: native ES modules (no build step), each
/// function short enough to read whole, each import naming something its module exports,
/// and each served under the version the pages name.
@Suite("The gallery's script modules", .offThePool)
struct GalleryScriptTests {
  static let scripts = Gallery.files.filter { $0.key.hasSuffix(".js") }

  @Test(
    "no function of the gallery's scripts is over 150 lines, and the scanner finds the long one it is shown"
  )
  func shortFunctions() throws {
    #expect(Self.scripts.count >= 10, "\(Self.scripts.keys.sorted())")
    var long: [String] = []
    for (name, text) in Self.scripts {
      for function in JSFunctions.spans(in: text) where function.lines > 150 {
        long.append("\(name):\(function.line) (\(function.lines) lines)")
      }
    }
    #expect(long.sorted() == [])
    // The scanner itself, on what it must tell apart: a function of 151 lines (braces in
    // strings, a comment, a template and a regular expression inside), blocks and objects
    // that are not functions, an arrow, a method.
    let filler = Array(repeating: "  x += \"}{\"; // }\n  y = `${a}}` + /[}]/.source;", count: 74)
    let sample = """
      function big(a) {
      \(filler.joined(separator: "\n"))
      }
      if (a) {
        b();
      }
      const o = { c: 1 };
      const f = (x) => {
        return x;
      };
      class K {
        m(y) {
          if (y) { return 1; }
        }
      }
      """
    let spans = JSFunctions.spans(in: sample)
    #expect(spans.map(\.line) == [1, 155, 159])
    #expect(spans.map(\.lines) == [150, 3, 3])
    #expect(
      JSFunctions.spans(in: "function g() {\n" + String(repeating: "\n", count: 150) + "}").map(
        \.lines) == [152])
  }

  @Test("each import names a module of the gallery and bindings that module exports")
  func importsResolve() throws {
    var exports: [String: Set<String>] = [:]
    for (name, text) in Self.scripts {
      exports[name] = Set(
        text.matches(of: /export\s+(?:async\s+)?(?:function|class|const|let)\s+([A-Za-z_$][\w$]*)/)
          .map { String($0.1) })
    }
    var imported = 0
    for (name, text) in Self.scripts {
      for match in text.matches(of: /import\s*\{([^}]*)\}\s*from\s*"\.\/([^"]+)"/) {
        let module = String(match.2)
        let names = match.1.split(separator: ",").map {
          $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(exports[module] != nil, "\(name) imports \(module), which is not a gallery module")
        for binding in names where !binding.isEmpty {
          imported += 1
          #expect(
            exports[module]?.contains(binding) == true, "\(name) imports \(binding) from \(module)")
        }
      }
      #expect(!text.contains("\"use strict\""), "\(name): a module is strict already")
    }
    #expect(imported > 20)
  }

  @Test(
    "the pages load the modules under the version they name; that version is cached for good, another is asked again, an unknown file is a 404"
  )
  func servedUnderTheirVersion() async throws {
    let served = try ServedLibrary(samples: ["gps.jpg"])
    try await served.test { client, _ in
      let page = try await client.execute(uri: "/login", method: .get)
      let html = String(buffer: page.body)
      let version = try #require(
        html.firstMatch(
          of: /<script type="module" src="\/static\/([0-9a-f]{12})\/gallery.js"><\/script>/)?.1)
      // Every module gallery.js imports, however deep, is preloaded under the same version
      // (fetched at once, not a level a round trip), and nothing else is.
      var imported: Set<String> = []
      var next = ["gallery.js"]
      while let module = next.popLast() {
        for match in (Self.scripts[module] ?? "").matches(
          of: /import\s*\{[^}]*\}\s*from\s*"\.\/([^"]+)"/)
        where imported.insert(String(match.1)).inserted {
          next.append(String(match.1))
        }
      }
      let preloaded = html.matches(
        of: /<link rel="modulepreload" href="\/static\/([0-9a-f]{12})\/([a-z]+\.js)">/)
      #expect(preloaded.allSatisfy { $0.1 == version })
      #expect(Set(preloaded.map { String($0.2) }) == imported && preloaded.count == imported.count)
      #expect(imported.count >= 9, "\(imported.sorted())")
      for name in Self.scripts.keys.sorted() {
        let current = try await client.execute(uri: "/static/\(version)/\(name)", method: .get)
        #expect(current.status == .ok, "\(name)")
        #expect(current.headers[.contentType] == "text/javascript; charset=utf-8")
        #expect(current.headers[.cacheControl] == "public, max-age=31536000, immutable")
        #expect(String(buffer: current.body) == Self.scripts[name].map { $0 + "\n" })
        let old = try await client.execute(uri: "/static/000000000000/\(name)", method: .get)
        #expect(old.status == .ok && old.headers[.cacheControl] == "no-cache", "\(name)")
      }
      let css = try await client.execute(uri: "/static/gallery.css?v=\(version)", method: .get)
      #expect(css.headers[.cacheControl] == "public, max-age=31536000, immutable")
      for uri in [
        "/static/\(version)/nothing.js", "/static/\(version)/login.mustache",
        "/static/\(version)/..%2Fgallery.js", "/static/\(version)x/gallery.js",
        "/static/\(version.uppercased())/gallery.js", "/static/..%2F/gallery.js",
      ] {
        let missing = try await client.execute(uri: uri, method: .get)
        #expect(missing.status == .notFound, "\(uri)")
        #expect(missing.headers[.contentType] == "application/json; charset=utf-8", "\(uri)")
      }
    }
  }
}

/// Where a script's functions start and how many lines each spans (its first line to the
/// line of its closing brace): function declarations and expressions, methods and arrows
/// with a body. Strings, templates, comments and regular expressions are skipped, so a
/// brace in one does not count.
enum JSFunctions {
  struct Span: Equatable {
    var line: Int
    var lines: Int
  }

  static func spans(in text: String) -> [Span] {
    let chars = Array(text.unicodeScalars)
    var spans: [Span] = []
    var braces: [(line: Int, function: Bool)] = []
    var parens: [Int] = []  // where each open parenthesis is
    var lastClosedParen: Int? = nil  // the open parenthesis of the last `)`
    var line = 1
    var i = 0
    var previous: Unicode.Scalar = ";"  // the last character of code, not space
    var previousAt = -1
    func skip(until end: Unicode.Scalar, from start: Int) -> Int {
      var j = start
      while j < chars.count, chars[j] != end {
        if chars[j] == "\\" { j += 1 }
        if j < chars.count, chars[j] == "\n" { line += 1 }
        j += 1
      }
      return j
    }
    while i < chars.count {
      let c = chars[i]
      if c == "\n" {
        line += 1
        i += 1
        continue
      }
      if c == " " || c == "\t" {
        i += 1
        continue
      }
      let next: Unicode.Scalar = i + 1 < chars.count ? chars[i + 1] : " "
      if c == "/" && next == "/" {
        while i < chars.count, chars[i] != "\n" { i += 1 }
        continue
      }
      if c == "/" && next == "*" {
        i += 2
        while i + 1 < chars.count, !(chars[i] == "*" && chars[i + 1] == "/") {
          if chars[i] == "\n" { line += 1 }
          i += 1
        }
        i += 2
        continue
      }
      if c == "\"" || c == "'" || c == "`" {
        // (A template's `${...}` is skipped with it: the gallery puts no function in one.)
        i = skip(until: c, from: i + 1) + 1
        previous = c
        previousAt = i - 1
        continue
      }
      if c == "/" && "(,=:[!&|?{};+".unicodeScalars.contains(previous) {
        var j = i + 1
        var inClass = false
        while j < chars.count, chars[j] != "\n" {
          if chars[j] == "\\" {
            j += 2
            continue
          }
          if chars[j] == "[" { inClass = true }
          if chars[j] == "]" { inClass = false }
          if chars[j] == "/" && !inClass { break }
          j += 1
        }
        i = j + 1
        previous = "/"
        previousAt = j
        continue
      }
      switch c {
      case "(":
        parens.append(i)
      case ")":
        lastClosedParen = parens.popLast()
      case "{":
        var function = false
        if previous == ">", previousAt > 0, chars[previousAt - 1] == "=" {
          function = true
        } else if previous == ")", let open = lastClosedParen {
          var k = open - 1
          while k >= 0, chars[k] == " " { k -= 1 }
          var word = ""
          while k >= 0,
            chars[k].properties.isAlphabetic || chars[k] == "_" || chars[k] == "$"
              || ("0"..."9").contains(chars[k])
          {
            word = String(chars[k]) + word
            k -= 1
          }
          function = !["if", "for", "while", "switch", "catch", "with"].contains(word)
        }
        braces.append((line, function))
      case "}":
        if let open = braces.popLast(), open.function {
          spans.append(Span(line: open.line, lines: line - open.line + 1))
        }
      default:
        break
      }
      previous = c
      previousAt = i
      i += 1
    }
    return spans.sorted { $0.line < $1.line }
  }
}

import Hummingbird

/// A request's query string read as an HTML form writes it: a value's `+` is a space, then
/// its percent-escapes are read (a value whose escapes do not read stays as it came). The
/// gallery's search form sends `text=Marie+Curie`, and an album titled "Trip 2024" is asked
/// for as `album=Trip+2024`; read with `+` kept, both found nothing. Names are taken as they
/// come, as Hummingbird takes them.
struct FormQuery: Sequence {
  private let text: Substring

  init(_ query: String?) { text = (query ?? "")[...] }

  /// `text` as a form writes it: `+` is a space, then its percent-escapes are read; nil when
  /// they do not read. (Form bodies are read with it too: ``AccessMiddleware/formPairs(_:)``.)
  static func decode(_ text: Substring) -> String? {
    // Most values (ids, versions, sizes, signatures) hold neither: no Foundation call, which
    // was a tenth of a cached thumbnail's time on the server.
    needsDecoding(text) ? formDecoded(text) : String(text)
  }

  /// `text` with its `+` read as spaces and then its percent-escapes; nil when they do not
  /// read.
  private static func formDecoded(_ text: Substring) -> String? {
    text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
  }

  private static func needsDecoding(_ text: Substring) -> Bool {
    text.utf8.contains { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "%") }
  }

  /// A value as the query gives it: itself when it needs no decoding (no copy), else decoded,
  /// or with only its `+` read when its escapes do not read.
  private static func value(_ raw: Substring) -> Substring {
    guard needsDecoding(raw) else { return raw }
    return (formDecoded(raw) ?? raw.replacingOccurrences(of: "+", with: " "))[...]
  }

  /// The first value of `name`, if the query has it: one walk along the bytes, comparing
  /// names byte for byte (a route reads several values of every request; each is looked up
  /// this way, with no list of pairs made).
  subscript(_ name: String) -> Substring? {
    var found: Substring?
    _ = forEachPair { pairName, raw in
      guard pairName.utf8.elementsEqual(name.utf8) else { return true }
      found = Self.value(raw)
      return false
    }
    return found
  }

  /// Calls `body` with each pair's name and raw value, in order (a pair without `=` has an
  /// empty value; empty pairs are skipped), while it returns true.
  private func forEachPair(_ body: (Substring, Substring) -> Bool) -> Bool {
    let bytes = text.utf8
    var start = bytes.startIndex
    while start < bytes.endIndex {
      let end = bytes[start...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.endIndex
      if start < end {
        let pair = text[start..<end]
        let equals = pair.utf8.firstIndex(of: UInt8(ascii: "="))
        let keepGoing =
          equals.map { body(text[start..<$0], text[pair.utf8.index(after: $0)..<end]) }
          ?? body(pair, text[end..<end])
        if !keepGoing { return false }
      }
      start = end < bytes.endIndex ? bytes.index(after: end) : end
    }
    return true
  }

  /// The first name, in order, that `matches` says yes to (no value is read).
  func firstName(where matches: (Substring) -> Bool) -> Substring? {
    var found: Substring?
    _ = forEachPair { name, _ in
      guard matches(name) else { return true }
      found = name
      return false
    }
    return found
  }

  func makeIterator() -> IndexingIterator<[(Substring, Substring)]> {
    var pairs: [(Substring, Substring)] = []
    _ = forEachPair { name, raw in
      pairs.append((name, Self.value(raw)))
      return true
    }
    return pairs.makeIterator()
  }
}

extension Request {
  /// The query string as a form (see ``FormQuery``): what every route reads.
  var query: FormQuery { FormQuery(uri.query) }
}

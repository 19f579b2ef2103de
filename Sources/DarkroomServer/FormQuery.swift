import Hummingbird

/// A request's query string read as an HTML form writes it: a value's `+` is a space, then
/// its percent-escapes are read (a value whose escapes do not read stays as it came). The
/// gallery's search form sends `text=Marie+Curie`, and an album titled "Trip 2024" is asked
/// for as `album=Trip+2024`; read with `+` kept, both found nothing. Names are taken as they
/// come, as Hummingbird takes them.
struct FormQuery: Sequence {
  private let pairs: [(Substring, Substring)]

  init(_ query: String?) {
    pairs = (query ?? "").split(separator: "&").map { pair in
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      guard parts.count == 2 else { return (parts[0], "") }
      let value = Self.decode(parts[1]) ?? parts[1].replacingOccurrences(of: "+", with: " ")
      return (parts[0], value[...])
    }
  }

  /// `text` as a form writes it: `+` is a space, then its percent-escapes are read; nil when
  /// they do not read. (Form bodies are read with it too: ``AccessMiddleware/formPairs(_:)``.)
  static func decode(_ text: Substring) -> String? {
    // Most values (ids, versions, sizes, signatures) hold neither: no Foundation call, which
    // was a tenth of a cached thumbnail's time on the server.
    if !text.utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "%") }) {
      return String(text)
    }
    return text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
  }

  /// The first value of `name`, if the query has it.
  subscript(_ name: String) -> Substring? {
    pairs.first { $0.0 == name }?.1
  }

  func makeIterator() -> IndexingIterator<[(Substring, Substring)]> { pairs.makeIterator() }
}

extension Request {
  /// The query string as a form (see ``FormQuery``): what every route reads.
  var query: FormQuery { FormQuery(uri.query) }
}

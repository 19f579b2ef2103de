/// Comparisons of secrets: the server's CSRF tokens, session seals and shared links'
/// passes, and rendition signatures.
package enum Secrets {
  /// Whether `a` and `b` are the same, in a time that depends on their lengths only, not on
  /// where they first differ.
  package static func equal(_ a: String, _ b: String) -> Bool {
    let (x, y) = (Array(a.utf8), Array(b.utf8))
    guard x.count == y.count else { return false }
    return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
  }
}

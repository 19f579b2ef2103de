#if canImport(Glibc)
  import Glibc
#endif

/// Names for files that come from elsewhere (an upload, a space's export), and as a folder
/// listing gives them.
package enum FileNames {
  /// A file name's last component, without control characters, slashes or a leading dot,
  /// at most 200 bytes; `upload` when nothing is left.
  package static func safe(_ name: String) -> String {
    let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
    var cleaned = String(
      last.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(Character.init))
    while cleaned.hasPrefix(".") || cleaned.hasPrefix(" ") { cleaned.removeFirst() }
    while cleaned.utf8.count > 200 { cleaned.removeFirst() }
    return cleaned.isEmpty ? "upload" : cleaned
  }

  /// The name of a directory entry `readdir` returned (its `d_name`, which ends in a NUL).
  static func entry(_ entry: UnsafeMutablePointer<dirent>) -> String {
    withUnsafeBytes(of: entry.pointee.d_name) { raw in
      String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
  }
}

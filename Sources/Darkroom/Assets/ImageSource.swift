/// Where an image's bytes come from: a file, or memory (standard input, an upload).
///
/// ```swift
/// let rendition = try Renderer().render(.file("IMG_0001.jpg"), RenditionSpec(.fullscreen))
/// let metadata = try AssetMetadata.read(.data(bytes, name: "upload.jpg"))
/// ```
///
/// `ImageSource` is a `Sendable` value; bytes in memory are copied on write like any array.
package enum ImageSource: Sendable {
  /// A file, by its path (relative paths are to the current directory).
  case file(String)
  /// Bytes in memory, with a name for messages (`-` for standard input).
  case data([UInt8], name: String)

  /// The name errors and outputs use (a file's own path where an ``OpenedFiles`` alias
  /// stands for it).
  package var name: String {
    switch self {
    case .file(let path): OpenedFiles.name(of: path)
    case .data(_, let name): OpenedFiles.name(of: name)
    }
  }

  /// The whole image's bytes: the memory's, or the file read.
  ///
  /// - Throws: What reading the file throws (`notFound`, `io`, ...).
  func bytes() throws(DarkroomError) -> [UInt8] {
    switch self {
    case .data(let data, _): data
    case .file(let path): try InputFile.readAll(path)
    }
  }
}

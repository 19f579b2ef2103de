import FoundationEssentials

/// A library is a folder: like a git work tree, the nearest `.darkroom/` found walking up
/// from a file holds its originals, adjustment data and rendition cache. Moving the whole
/// folder moves the library with it.
public struct Library: Sendable, Hashable {
  /// The folder that contains `.darkroom/`.
  public let root: URL

  public static let folderName = ".darkroom"

  public var metadataFolder: URL { root.appendingPathComponent(Self.folderName) }
  public var cacheFolder: URL { metadataFolder.appendingPathComponent("cache") }

  public init(root: URL) {
    self.root = root.standardizedFileURL
  }

  /// The library of `path`: the nearest ancestor folder holding `.darkroom/`, or nil.
  public static func containing(_ path: String) -> Library? {
    var folder = URL(fileURLWithPath: path).standardizedFileURL.deletingLastPathComponent()
    while true {
      var isFolder = false
      let candidate = folder.appendingPathComponent(folderName).path
      if FileManager.default.fileExists(atPath: candidate, isDirectory: &isFolder), isFolder {
        return Library(root: folder)
      }
      let parent = folder.deletingLastPathComponent()
      if parent.path == folder.path { return nil }
      folder = parent
    }
  }
}

import FoundationEssentials

/// The `.darkroom/` folder that makes a folder a library, found as git finds its work tree.
package enum DarkroomFolder {
  /// `.darkroom`.
  package static let name = ".darkroom"

  /// The nearest folder holding `.darkroom/`, from the folder `path` names (or, for a file,
  /// the folder it is in) upwards; nil if there is none.
  package static func root(containing path: String) -> URL? {
    var folder = URL(fileURLWithPath: path).standardizedFileURL
    var namesFolder = false
    if !FileManager.default.fileExists(atPath: folder.path, isDirectory: &namesFolder)
      || !namesFolder
    {
      folder.deleteLastPathComponent()
    }
    while true {
      var isFolder = false
      let candidate = folder.appendingPathComponent(name).path
      if FileManager.default.fileExists(atPath: candidate, isDirectory: &isFolder), isFolder {
        return folder
      }
      let parent = folder.deletingLastPathComponent()
      if parent.path == folder.path { return nil }
      folder = parent
    }
  }
}

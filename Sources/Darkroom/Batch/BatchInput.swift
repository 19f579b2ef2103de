import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// One file of a batch: where it is, and its path relative to the argument it came from
/// (what `-o DIR` mirrors, and what `--shard` hashes).
///
/// `BatchInput` is a `Sendable` value type.
public struct BatchInput: Sendable, Hashable {
  /// The file's path: as given, or the folder argument joined with ``relativePath``.
  public var path: String
  /// The path below the folder argument it was found in; the file name alone for a file
  /// named directly.
  public var relativePath: String

  /// An input at `path`, known by `relativePath` to `-o DIR` and `--shard`.
  public init(path: String, relativePath: String) {
    self.path = path
    self.relativePath = relativePath
  }
}

/// Turns command-line inputs (files, folders walked recursively, lists read from standard
/// input) into the batch's files. Folders contribute only files that are images (and, when
/// asked, videos) by their content, not their extension; symbolic-link loops are walked once;
/// library folders (`.darkroom/`) and hidden files are skipped.
///
/// ```swift
/// let (inputs, errors) = BatchInputs.collect(["photos", "scans/page-1.tif"])
/// for error in errors { print(error) }  // arguments that cannot be read
/// ```
///
/// Its functions keep no state: call them from any thread.
package enum BatchInputs {
  /// Files named explicitly are always taken (a non-image among them fails in the batch,
  /// with its own error); files found in folders are taken only if they look like images,
  /// or like videos with `videos` (an edit whose filters mean the same on every frame:
  /// ``Library/takesVideos(_:mode:)``).
  ///
  /// Inputs come in argument order, each folder's files sorted by name; a path met twice is
  /// taken once. `errors` holds a ``DarkroomError`` (`notFound`, `unreadable` or `io`) for
  /// each argument that cannot be read; the other arguments are still collected.
  package static func collect(_ arguments: [String], videos: Bool = false) -> (
    inputs: [BatchInput], errors: [DarkroomError]
  ) {
    var inputs: [BatchInput] = []
    var errors: [DarkroomError] = []
    var seen = Set<String>()
    for argument in arguments {
      var info = stat()
      guard stat(argument, &info) == 0 else {
        errors.append(InputFile.errnoError(argument))
        continue
      }
      if (info.st_mode & S_IFMT) == S_IFDIR {
        var visited = Set<FileKey>()
        walk(
          folder: argument, relative: "", videos: videos, visited: &visited, into: &inputs,
          seen: &seen)
      } else if seen.insert(argument).inserted {
        inputs.append(BatchInput(path: argument, relativePath: FilePath(argument).name))
      }
    }
    return (inputs, errors)
  }

  private struct FileKey: Hashable {
    var device: UInt64
    var inode: UInt64
  }

  private static func walk(
    folder: String, relative: String, videos: Bool, visited: inout Set<FileKey>,
    into inputs: inout [BatchInput], seen: inout Set<String>
  ) {
    var info = stat()
    guard stat(folder, &info) == 0 else { return }
    // A folder reached twice (a symbolic link back up the tree) is walked once.
    guard visited.insert(FileKey(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))).inserted
    else {
      return
    }
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
    for name in names.sorted() where !name.hasPrefix(".") {
      let path = folder.hasSuffix("/") ? folder + name : folder + "/" + name
      let rel = relative.isEmpty ? name : relative + "/" + name
      var entry = stat()
      guard stat(path, &entry) == 0 else { continue }  // a dangling link
      if (entry.st_mode & S_IFMT) == S_IFDIR {
        walk(
          folder: path, relative: rel, videos: videos, visited: &visited, into: &inputs,
          seen: &seen)
      } else if (entry.st_mode & S_IFMT) == S_IFREG,
        looksLikeImage(path) || (videos && looksLikeVideo(path)), seen.insert(path).inserted
      {
        inputs.append(BatchInput(path: path, relativePath: rel))
      }
    }
  }

  /// Whether a file starts like an image format Darkroom reads: a trusted one, one allowed
  /// (``TrustedFormats/allow(_:)``), or JPEG XL or a camera RAW (read in the workers, or
  /// given its line saying how to allow it). Other files in a folder (sidecars, notes, videos) are no inputs.
  package static func looksLikeImage(_ path: String) -> Bool {
    guard let file = try? InputFile(path), let head = try? file.read(at: 0, count: 32),
      let format = TrustedFormats.sniff(head[...], name: path), format != "video"
    else { return false }
    return TrustedFormats.permits(format) || TrustedFormats.trustedInWorkers.contains(format)
  }

  /// Whether a file starts like a video Darkroom reads (ISO media: MP4, QuickTime; not an
  /// M4A's sound alone).
  package static func looksLikeVideo(_ path: String) -> Bool {
    guard let file = try? InputFile(path), let head = try? file.read(at: 0, count: 32) else {
      return false
    }
    return VideoHeader.recognises(head[...])
  }

  /// Paths from a list on standard input: one a line, or NUL-separated.
  package static func parseList(_ bytes: [UInt8], nulSeparated: Bool) -> [String] {
    let separator: UInt8 = nulSeparated ? 0 : UInt8(ascii: "\n")
    return bytes.split(separator: separator).map { String(decoding: $0, as: UTF8.self) }
      .map { nulSeparated ? $0 : ($0.hasSuffix("\r") ? String($0.dropLast()) : $0) }
      .filter { !$0.isEmpty }
  }
}

/// `--shard i/n`: a deterministic share of a batch, the same whatever order the inputs were
/// listed in, so n machines (an indexed Job, an array job) together cover every file once.
///
/// ```swift
/// guard let shard = Shard("1/4") else { fatalError("not i/n") }  // the second of four
/// let mine = inputs.filter(shard.contains)
/// ```
///
/// `Shard` is a `Sendable` value type.
package struct Shard: Sendable, Equatable {
  /// Which share, counting from 0.
  package var index: Int
  /// How many shares there are.
  package var count: Int

  /// Parses `i/n` with 0 <= i < n.
  package init?(_ text: String) {
    let parts = text.split(separator: "/")
    guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]), n >= 1,
      (0..<n).contains(i)
    else { return nil }
    index = i
    count = n
  }

  /// Whether `input` belongs to this shard: by a hash of its relative path.
  package func contains(_ input: BatchInput) -> Bool {
    let digest = ContentHash.of(text: input.relativePath).hex.prefix(15)
    return Int(digest, radix: 16).map { $0 % count == index } ?? false
  }
}

extension FilePath {
  /// The last component: `a/b/c.jpg` → `c.jpg`.
  var name: String {
    let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
    return trimmed.split(separator: "/").last.map(String.init) ?? trimmed
  }

  /// The path split before its name's extension: `a/IMG_0001.HEIC` → (`a/IMG_0001`, `HEIC`);
  /// nil for a name without one (no dot, or only a leading one: `.hidden`). What a file's
  /// sidecars and Live Photo partner are named from.
  var splitExtension: (base: String, ext: String)? {
    let name = self.name
    guard !path.hasSuffix("/"), let dot = name.lastIndex(of: "."), dot != name.startIndex else {
      return nil
    }
    let ext = String(name[name.index(after: dot)...])
    return (String(path.dropLast(ext.count + 1)), ext)
  }
}

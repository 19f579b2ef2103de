import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// Verifies a library's store, as `git fsck` does a repository, and repairs what can be
/// repaired without guessing at content.
///
/// It checks that every original's bytes still match the SHA-256 it is filed under, that
/// every adjustment document's original is in the store, that no original shares its inode
/// with a file outside `.darkroom/` (a hard link shares mode and content: a chmod or an
/// in-place write to the user's file would change the "original"), and that no edited file
/// was left read-only. Darkroom 0.1.0 made both of the last two mistakes; `repair` mends them.
///
/// ```swift
/// let library = Library(root: URL(fileURLWithPath: "photos"))
/// let report = LibraryCheck.run(on: library, repair: true)
/// for finding in report.findings { print(finding) }
/// print(report.isSound ? "sound" : "needs attention")
/// ```
///
/// Not safe to run beside edits of the same library in other processes while repairing.
/// A check reads and hashes every original in the store, so it takes about as long as
/// reading them.
package enum LibraryCheck {
  /// One problem found, and whether it was repaired. `Finding` is a `Sendable` value type.
  package struct Finding: Sendable, Equatable, Codable, CustomStringConvertible {
    /// What is wrong; the raw values appear in `darkroom check --json`.
    package enum Kind: String, Sendable, Codable {
      /// An original's bytes no longer match its hash. Not repairable here.
      case damagedOriginal = "damaged-original"
      /// Adjustment data names an original the store does not hold. Not repairable here.
      case missingOriginal = "missing-original"
      /// An original shares its inode with other names (hard links).
      case sharedInode = "shared-inode"
      /// An edited file is read-only (0444), as Darkroom 0.1.0 left them.
      case readOnlyEdit = "read-only-edit"
      /// The catalog database fails SQLite's own checks. Not repairable here.
      case damagedCatalog = "damaged-catalog"
      /// A temporary file whose writer died (a cut-off upload, an edit never renamed into
      /// place); repair removes it.
      case abandonedTemporary = "abandoned-temporary"
      /// A photo or video of the library whose file is damaged (``Asset/damage``): cut
      /// short, a header that makes no sense. Not repairable here: a backup or the camera's
      /// card may hold it whole.
      case damagedFile = "damaged-file"
    }

    /// What is wrong.
    package var kind: Kind
    /// The file the finding is about (a store entry or a user's file).
    package var file: String
    /// What is wrong, in words, without the file name.
    package var message: String
    /// Whether `repair` mended it.
    package var repaired: Bool

    /// The finding in one line: `FILE: message`, with `(repaired)` when it was.
    package var description: String { "\(file): \(message)\(repaired ? " (repaired)" : "")" }
  }

  /// What a check found. `Report` is a `Sendable` value type.
  package struct Report: Sendable, Equatable, Codable {
    /// The library's root folder.
    package var library: String
    /// How many originals the store holds.
    package var originals: Int
    /// How many adjustment documents the store holds.
    package var adjustments: Int
    /// Every problem found, repaired or not.
    package var findings: [Finding]
    /// Nothing is wrong, or everything wrong was repaired.
    package var isSound: Bool { findings.allSatisfy(\.repaired) }
  }

  /// Checks `library`; with `repair`, separates shared inodes and makes read-only edits
  /// writable again. `searching` adds folders outside the library whose files may share an
  /// inode with its originals (the inputs of an `apply -o` by Darkroom 0.1.0).
  ///
  /// It does not throw: a file it cannot read is reported as a finding or passed over.
  package static func run(on library: Library, searching: [String] = [], repair: Bool = false)
    -> Report
  {
    let store = library.store
    var findings: [Finding] = []
    let originals = names(in: store.originalsFolder).filter { ContentHash(hex: $0) != nil }
    let documents = names(in: store.adjustmentsFolder).filter { $0.hasSuffix(".json") }

    // User files by inode, to name the other side of a hard link, and read-only edits.
    let found = BatchInputs.collect([library.root.path] + searching, videos: true)
    let userFiles = found.inputs.map(\.path)
    var byInode: [FileKey: [String]] = [:]
    for file in userFiles {
      if let key = FileKey(file) { byInode[key.withoutLinks, default: []].append(file) }
    }

    for name in originals {
      let path = store.originalsFolder + "/" + name
      guard let hash = ContentHash(hex: name), (try? ContentHash.of(file: path)) == hash else {
        findings.append(
          Finding(
            kind: .damagedOriginal, file: path,
            message:
              "the original's bytes no longer match its SHA-256; edits of it cannot be reverted",
            repaired: false))
        continue
      }
      guard let key = FileKey(path), key.links > 1 else { continue }
      let others = byInode[key.withoutLinks] ?? []
      let elsewhere =
        others.isEmpty
        ? "\(key.links - 1) other name(s) outside the folders searched"
        : others.joined(separator: ", ")
      var repaired = false
      if repair, let bytes = try? InputFile.readAll(path), ContentHash.of(bytes: bytes) == hash {
        repaired = (try? AtomicFile.write(bytes, to: path, durable: true, mode: 0o444)) != nil
        if repaired { others.forEach(restoreWritable) }
      }
      findings.append(
        Finding(
          kind: .sharedInode, file: path,
          message:
            "the original shares its inode with \(elsewhere): a change to that file would change the original",
          repaired: repaired))
    }

    for name in documents {
      let path = store.adjustmentsFolder + "/" + name
      guard let bytes = try? InputFile.readAll(path),
        let data = try? AdjustmentData.decode(json: bytes, source: path, lenient: true),
        let hash = ContentHash(hex: data.original.sha256)
      else { continue }
      if !originals.contains(hash.hex) {
        findings.append(
          Finding(
            kind: .missingOriginal, file: path,
            message:
              "names original \(hash.hex.prefix(12))… (\(data.original.fileName)), which the store lacks",
            repaired: false))
      }
    }

    // Edited results that Darkroom 0.1.0 left with the store's 0444.
    for file in userFiles where FileKey(file)?.mode == 0o444 {
      guard let hash = try? ContentHash.of(file: file),
        (try? InputFile(store.adjustmentPath(forResult: hash))) != nil
      else { continue }
      if repair { restoreWritable(file) }
      findings.append(
        Finding(
          kind: .readOnlyEdit, file: file,
          message: "edited file is read-only (0444), as darkroom 0.1.0 left edits",
          repaired: repair && FileKey(file)?.mode != 0o444))
    }
    return Report(
      library: library.root.path, originals: originals.count, adjustments: documents.count,
      findings: findings)
  }

  /// A file the old store made 0444 gets the mode a new file would have (0666 less umask);
  /// any other mode was the user's choice and stays.
  private static func restoreWritable(_ path: String) {
    guard FileKey(path)?.mode == 0o444 else { return }
    let mask = umask(0)
    umask(mask)
    chmod(path, 0o666 & ~mask)
  }

  private static func names(in folder: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
  }

  private struct FileKey: Hashable {
    var device: UInt64
    var inode: UInt64
    var links = 0
    var mode: mode_t = 0

    init?(_ path: String) {
      var info = stat()
      guard stat(path, &info) == 0 else { return nil }
      device = UInt64(info.st_dev)
      inode = UInt64(info.st_ino)
      links = Int(info.st_nlink)
      mode = info.st_mode & 0o7777
    }

    init(device: UInt64, inode: UInt64) {
      self.device = device
      self.inode = inode
    }

    /// The identity alone, as a dictionary key.
    var withoutLinks: FileKey { FileKey(device: device, inode: inode) }
  }
}

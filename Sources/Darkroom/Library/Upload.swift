import Crypto
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// A file arriving into a library a piece at a time (an HTTP upload): written to a temporary
/// file in its folder and hashed as it arrives, then checked, and only then named and
/// catalogued. Content the library already holds is reported, not stored twice.
///
/// ```swift
/// let upload = try Upload(into: library, name: "IMG_0001.jpg")
/// for chunk in body { try upload.append(chunk) }
/// switch try upload.finish() {
/// case .added(let asset): print("new", asset.id)
/// case .duplicate(let asset): print("already there as", asset.id)
/// }
/// ```
///
/// An upload that is never finished (the client went away) leaves nothing: its temporary
/// file is removed when the `Upload` is. One task owns an `Upload`; it is not `Sendable`.
package final class Upload {
  /// What a finished upload became.
  package enum Outcome: Sendable, Equatable {
    /// A new asset, named and catalogued.
    case added(Asset)
    /// The library already had these bytes: this asset. Nothing was stored.
    case duplicate(Asset)
  }

  /// What an upload may be.
  package struct Limits: Sendable {
    /// Bytes, at most (200 MiB unless set).
    package var maxBytes: Int64 = 200 << 20
    /// Pixels of an image, at most, read from its header.
    package var maxPixels = Renderer().maxPixels
    package init() {}

    /// None: what the Swift API's ``Library/add(file:move:into:)`` and ``Library/add(bytes:name:)``
    /// hold a caller's own files to (the renderer's own limit still applies when they are
    /// shown).
    package static let none: Limits = {
      var limits = Limits()
      (limits.maxBytes, limits.maxPixels) = (.max, .max)
      return limits
    }()

    /// - Throws: `tooLarge`, naming `name`, for an image over ``maxPixels``.
    package func check(_ metadata: AssetMetadata, name: String) throws(DarkroomError) {
      try check(width: metadata.width, height: metadata.height, name: name)
    }

    /// - Throws: `tooLarge`, naming `name`, for a picture (or a video's frames) over
    ///   ``maxPixels``.
    package func check(width: Int, height: Int, name: String) throws(DarkroomError) {
      let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
      guard !overflow, pixels <= maxPixels else {
        throw DarkroomError(
          .tooLarge, file: name, "is \(width)x\(height): more than \(maxPixels) pixels")
      }
    }
  }

  /// An upload past `limits`' bytes, named.
  package static func tooLarge(_ name: String, _ limits: Limits) -> DarkroomError {
    DarkroomError(
      .tooLarge, file: safeName(name),
      "is larger than the upload limit of \(limits.maxBytes) bytes")
  }

  /// An upload whose body went on past the length it announced.
  static func overLength(_ name: String, _ length: Int) -> DarkroomError {
    DarkroomError(
      .tooLarge, file: safeName(name), "sent more than the \(length) bytes it announced")
  }

  /// An upload whose body ended before its length, or failed on the way: the sender's
  /// request, not the file, is at fault (`invalidArgument`, an HTTP 400).
  static func cutOff(_ name: String) -> DarkroomError {
    DarkroomError(
      .invalidArgument, file: safeName(name), "the upload ended before all its bytes came")
  }

  /// The folder, relative to the library's root, that uploads go to unless told otherwise.
  package static let defaultFolder = "Uploads"

  let library: Library
  let folder: String
  let name: String
  let limits: Limits
  let temporary: String
  /// The folder, opened through no link: every name is made and removed relative to it.
  private let folderFD: Int32
  private let temporaryName: String
  private var fd: Int32
  private var hasher = SHA256()
  private(set) package var byteCount: Int64 = 0
  /// The temporary file is gone: linked into place, or abandoned.
  private var finished = false

  /// Starts an upload of a file called `name` (only its last component is used, cleaned of
  /// anything a file name should not hold) into `folder` of the library (``defaultFolder``
  /// for nil).
  ///
  /// - Throws: `invalidArgument` for a folder outside the library, or one reached through a
  ///   symbolic link (an upload never writes through a link); `io` when the folder or the
  ///   temporary file cannot be made.
  package init(
    into library: Library, name: String, folder: String? = nil, limits: Limits = Limits()
  ) throws(DarkroomError) {
    guard let folder = Self.safeFolder(folder ?? Self.defaultFolder) else {
      throw DarkroomError(.invalidArgument, "the folder must be a plain path inside the library")
    }
    self.library = library
    self.folder = library.rootPath + (folder.isEmpty ? "" : "/" + folder)
    self.name = Self.safeName(name)
    self.limits = limits
    // A file in the way of the folder is the request's mistake, not the server's.
    var walked = library.rootPath
    for part in folder.split(separator: "/") {
      walked += "/" + part
      var info = stat()
      if stat(walked, &info) == 0, info.st_mode & S_IFMT != S_IFDIR {
        throw DarkroomError(
          .invalidArgument, "the folder \(folder) cannot be made: a file is in the way")
      }
    }
    folderFD = try Beneath.folder(folder, in: library.rootPath, create: true)
    temporaryName = ".upload.\(getpid()).\(UInt64.random(in: 0...UInt64.max)).partial"
    temporary = self.folder + "/" + temporaryName
    fd = openat(
      folderFD, temporaryName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
    guard fd >= 0 else {
      let error = AtomicFile.writeError(self.folder + "/" + self.name, errno)
      close(folderFD)
      throw error
    }
    // Held while the bytes arrive: a server on another machine sharing the library sweeps
    // its dead writers' temporaries, not this one.
    FileLease.hold(fd)
  }

  deinit {
    abandon()
    close(folderFD)
  }

  /// Adds the next bytes.
  ///
  /// - Throws: `tooLarge` past ``Limits/maxBytes`` (the upload is then abandoned); `io` when
  ///   the bytes cannot be written.
  package func append(_ bytes: UnsafeRawBufferPointer) throws(DarkroomError) {
    byteCount += Int64(bytes.count)
    guard byteCount <= limits.maxBytes else {
      abandon()
      throw DarkroomError(
        .tooLarge, file: name, "is larger than the upload limit of \(limits.maxBytes) bytes")
    }
    hasher.update(bufferPointer: bytes)
    guard let start = bytes.baseAddress else { return }
    var offset = 0
    while offset < bytes.count {
      let n = write(fd, start + offset, bytes.count - offset)
      if n < 0 {
        if errno == EINTR { continue }
        let error = AtomicFile.writeError(folder + "/" + name, errno)
        abandon()
        throw error
      }
      offset += n
    }
  }

  /// Adds the next bytes, held in an array.
  package func append(_ bytes: [UInt8]) throws(DarkroomError) {
    var failure: DarkroomError?
    bytes.withUnsafeBytes { raw in
      do throws(DarkroomError) { try append(raw) } catch { failure = error }
    }
    if let failure { throw failure }
  }

  /// Removes what arrived so far (after ``finish()``, only the temporary name); the upload
  /// can no longer be finished.
  package func abandon() {
    if fd >= 0 { close(fd) }
    fd = -1
    if !finished { unlinkat(folderFD, temporaryName, 0) }
    finished = true
  }

  /// Checks what arrived and, if it is a photo or video within the limits that the library
  /// lacks, names it (never over another file: `name-2.jpg` if `name.jpg` is taken), makes it
  /// durable and catalogues it.
  ///
  /// - Throws: `empty`, `unsupportedFormat` (neither an image nor a video, read by content),
  ///   `tooLarge` (over ``Limits/maxPixels``) or what reading its header throws, each naming
  ///   the uploaded name; `io` when it cannot be written. Nothing is left behind.
  package func finish() throws(DarkroomError) -> Outcome {
    guard !finished, fd >= 0 else {
      throw DarkroomError(.invalidArgument, file: name, "the upload was abandoned")
    }
    defer { abandon() }
    guard fsync(fd) == 0 else { throw AtomicFile.writeError(folder + "/" + name, errno) }
    close(fd)
    fd = -1
    guard byteCount > 0 else { throw DarkroomError(.empty, file: name, "is empty (0 bytes)") }
    try check()
    let hash = ContentHash(digest: hasher.finalize())
    if let existing = try library.catalogCall({ try $0.assets(withHash: hash.hex) }).first {
      return .duplicate(existing)
    }
    let path = try place()
    abandon()  // the file is in place under its name; the temporary name goes
    fsync(folderFD)
    // The one way a file enters the catalog, as a scan reads it: this file alone.
    let summary = try library.recatalog([path])
    // A Live Photo's MOV beside its still is part of the still's asset, not one of its own.
    var owner: Asset?
    if let still = MotionPhoto.pairedStill(of: path) { owner = try library.asset(atPath: still) }
    guard let asset = try library.asset(atPath: path) ?? owner else {
      // The scan would not take it (damage it reads that the check above let through): it
      // is not kept, so that nothing uncatalogued stays in the library.
      unlinkat(folderFD, URL(fileURLWithPath: path).lastPathComponent, 0)
      fsync(folderFD)
      let problem = summary.problems.first.map { String($0.drop { $0 != ":" }.dropFirst(2)) }
      throw DarkroomError(
        .unsupportedFormat, file: name,
        "is not a photo or video Darkroom reads (\(problem ?? "the scan skipped it"))")
    }
    return .added(asset)
  }

  /// What arrived is an image within the pixel limit, or a video, judged by content.
  private func check() throws(DarkroomError) {
    let file = try InputFile(temporary)
    let head = try file.read(at: 0, count: min(file.size, 64))
    if VideoHeader.recognises(head[...]) { return }
    let metadata: AssetMetadata
    do {
      metadata = try AssetMetadata.read(path: temporary)
    } catch {
      var error = error
      error.file = name
      // The reader's own words may name the temporary file: the client knows its name only.
      error.message = error.message.replacing(temporaryName, with: name)
      throw DarkroomError.notAPhoto(error, name: name)
    }
    if let damage = metadata.damage {
      throw DarkroomError(.unsupportedFormat, file: name, "is damaged: \(damage.message)")
    }
    try limits.check(metadata, name: name)
  }

  /// Links the temporary file to its first free name, which never replaces a file.
  private func place() throws(DarkroomError) -> String {
    try AtomicFile.linkToFreeName(temporaryName, name: name, in: folder, descriptor: folderFD)
  }

  /// A file name's last component, cleaned (see ``FileNames/safe(_:)``).
  package static func safeName(_ name: String) -> String { FileNames.safe(name) }

  /// A relative folder of plain components (no `..`, `.`, hidden or empty ones); nil if not.
  static func safeFolder(_ folder: String) -> String? {
    let parts = folder.split(separator: "/", omittingEmptySubsequences: true)
    guard !folder.hasPrefix("/"),
      parts.allSatisfy({
        !$0.hasPrefix(".") && !$0.contains("\0") && !$0.contains("\\") && $0.utf8.count <= 255
      })
    else { return nil }
    return parts.joined(separator: "/")
  }
}

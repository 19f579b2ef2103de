import Dispatch
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Keeps a library's catalog current while files change, through inotify: the folders the
/// kernel names are scanned again (together, so a move between them keeps the asset's id),
/// and every change the catalog records is handed on, in order, after it is committed. When
/// the kernel's event queue overflows, events were lost: the whole folder is scanned again,
/// so nothing is missed. The `PHPhotoLibraryChangeObserver` of Darkroom.
///
/// ```swift
/// let watcher = try LibraryWatcher(library: library)
/// try watcher.run { change in print(change.kind, change.path) }   // until stop()
/// ```
package final class LibraryWatcher: Sendable {
  package let library: Library
  /// The watched folder, relative to the library's root.
  package let folder: String
  private let descriptor: Int32
  private let stopped = Atomic<Bool>(false)
  /// Watch descriptors and the folders they watch; touched by `run` only.
  private let watches = Locked<[Int32: String]>([:])

  /// How long the folders stay quiet before they are scanned, and the longest a change
  /// waits while they keep changing.
  package static let quiet: Duration = .milliseconds(150)
  package static let longest: Duration = .seconds(1)

  /// Watches `folder` (the library's root by default) and every folder under it.
  ///
  /// - Throws: `invalidArgument` for a folder outside the library; `io` when inotify cannot
  ///   be started.
  package init(library: Library, folder: String? = nil) throws(DarkroomError) {
    self.library = library
    let path = folder ?? library.root.path
    guard let relative = library.relativePath(path) else {
      throw DarkroomError(
        .invalidArgument, file: path, "is outside the library at \(library.root.path)")
    }
    self.folder = relative
    let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
    guard fd >= 0 else {
      throw DarkroomError(.io, "cannot watch files (inotify): \(String(cString: strerror(errno)))")
    }
    descriptor = fd
  }

  deinit { close(descriptor) }

  /// Ends ``run(_:)`` within a moment (from any thread, a signal handler's queue say).
  package func stop() { stopped.store(true, ordering: .relaxed) }

  /// Scans once, then watches until ``stop()``, calling `onChange` for each change, oldest
  /// first, from the change log (so changes other processes make to the library are
  /// reported too). `ready` is called once the folders are watched and the first scan's
  /// changes reported.
  ///
  /// - Throws: `io` when the catalog cannot be read or written.
  package func run(ready: () -> Void = {}, _ onChange: (CatalogChange) -> Void)
    throws(DarkroomError)
  {
    var sequence = try library.catalogCall { try $0.lastChange() }
    func report() throws(DarkroomError) {
      while true {
        let changes = try library.catalogCall { try $0.changes(since: sequence, limit: 1000) }
        guard let last = changes.last else { return }
        changes.forEach(onChange)
        sequence = last.sequence
      }
    }
    addWatches(under: folder)
    _ = try library.scanBlocking(folders: [
      Library.ScanRoot(folder: absolute(folder), recursive: true)
    ])
    try report()
    ready()

    var dirty: Set<Library.ScanRoot> = []
    var overflowed = false
    var firstEvent: ContinuousClock.Instant?
    var lastEvent = ContinuousClock.now
    var buffer = [UInt8](repeating: 0, count: 64 << 10)
    while !stopped.load(ordering: .relaxed) {
      var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
      _ = poll(&poller, 1, 50)
      while case let count = buffer.withUnsafeMutableBytes({
        read(descriptor, $0.baseAddress, $0.count)
      }), count > 0 {
        lastEvent = .now
        if firstEvent == nil { firstEvent = lastEvent }
        parse(buffer[0..<count], dirty: &dirty, overflowed: &overflowed)
      }
      if FaultInjection.fails("watch-overflow"), !dirty.isEmpty { overflowed = true }
      guard let first = firstEvent,
        ContinuousClock.now - lastEvent >= Self.quiet || ContinuousClock.now - first >= Self.longest
      else { continue }
      if overflowed {
        // Events were lost: every folder is watched and scanned again.
        watches.withLock { current in
          for wd in current.keys { inotify_rm_watch(descriptor, wd) }
          current.removeAll()
        }
        addWatches(under: folder)
        dirty = [.init(folder: absolute(folder), recursive: true)]
      }
      _ = try library.scanBlocking(folders: Array(dirty))
      try report()
      (dirty, overflowed, firstEvent) = ([], false, nil)
    }
  }

  private func absolute(_ relative: String) -> String {
    relative.isEmpty ? library.root.path : library.root.path + "/" + relative
  }

  /// Watches `relative` and the folders under it (not those whose names start with a dot).
  private func addWatches(under relative: String) {
    var queue = [relative]
    while let current = queue.popLast() {
      let mask: UInt32 =
        UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB)
        | UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
      let wd = inotify_add_watch(descriptor, absolute(current), mask)
      guard wd >= 0 else { continue }
      watches.withLock { $0[wd] = current }
      guard let listing = try? FileManager.default.contentsOfDirectory(atPath: absolute(current))
      else { continue }
      for name in listing where !name.hasPrefix(".") {
        let path = current.isEmpty ? name : current + "/" + name
        var info = stat()
        if lstat(absolute(path), &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
          queue.append(path)
        }
      }
    }
  }

  /// Reads a batch of `inotify_event`s: which folders changed, which folders are new.
  private func parse(
    _ bytes: ArraySlice<UInt8>, dirty: inout Set<Library.ScanRoot>, overflowed: inout Bool
  ) {
    var offset = bytes.startIndex
    while offset + 16 <= bytes.endIndex {
      func u32(_ at: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) }
      }
      let wd = Int32(bitPattern: u32(offset))
      let mask = u32(offset + 4)
      let length = Int(u32(offset + 12))
      let nameBytes = bytes[(offset + 16)..<min(bytes.endIndex, offset + 16 + length)]
      let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
      offset += 16 + length
      if mask & UInt32(IN_Q_OVERFLOW) != 0 {
        overflowed = true
        continue
      }
      guard let folder = watches.withLock({ $0[wd] }) else { continue }
      if mask & UInt32(IN_IGNORED) != 0 {
        watches.withLock { $0[wd] = nil }
        continue
      }
      if name.hasPrefix(".") { continue }
      let path = name.isEmpty ? folder : (folder.isEmpty ? name : folder + "/" + name)
      if mask & UInt32(IN_ISDIR) != 0 {
        if mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
          addWatches(under: path)
          dirty.insert(.init(folder: absolute(path), recursive: true))
        } else if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 {
          dirty.insert(.init(folder: absolute(path), recursive: true))
        }
      }
      dirty.insert(.init(folder: absolute(folder), recursive: false))
    }
  }
}

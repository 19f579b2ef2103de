import Dispatch
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// An open encrypted space: its originals, edits, catalog and renditions, encrypted at rest in
/// a folder that may hold other spaces (docs/spaces.md).
///
/// ```swift
/// let library = try Library.create(space: "Private", password: Array("correct horse".utf8))
/// let (asset, _) = try library.add(file: "IMG_0001.jpg")  // what is in it: through the library
/// let screen = try await library.image(for: asset.id, RenditionSpec(.fullscreen))
/// ```
///
/// A space is the sealed storage under a ``Library`` (``Library/init(space:)``): the library
/// fetches, renders, edits, reverts and trashes its assets, through the same calls and jobs
/// as a folder's. The space itself keeps its keys, its objects and its catalog's rows.
///
/// Nothing it does writes plaintext to disk: originals are decrypted into memory, rendered
/// from there (in a worker process when the renderer has workers, over a pipe) and encrypted
/// again before any byte is written. Its keys live in guarded memory and are gone with it.
/// Writers take the folder's lock, so processes and threads may share a folder.
public final class Space: Sendable {
  /// The folder of spaces this space is in.
  public let folder: String
  let keys: SpaceKeys
  let catalog: SpaceCatalog
  let slot: Int
  let kdf: KDFParameters
  private let state: Locked<State>
  /// The workers that have seen this space's decrypted bytes: its own, started like the
  /// renderer's shared ones, never used for anything else and ended when it closes.
  private let workers = Locked<WorkerPool?>(nil)
  /// Work under way that seals or decrypts with the keys (``using(_:)``), and whether the
  /// space was locked meanwhile: its keys are zeroed when the last of it ends. Also when the
  /// space was last used, and when it locks itself
  /// (``lockWhenIdle(after:atLatest:whenLocked:)``).
  let keeping = Locked(Keeping())
  /// The timer that locks the space when it has been idle
  /// (``lockWhenIdle(after:atLatest:whenLocked:)``).
  let idleTimer = Locked<DispatchSourceTimer?>(nil)

  struct Keeping {
    var users = 0
    var locked = false
    var lastUse = ContinuousClock.now
    /// How long the space may go unused before it locks itself; nil for as long as it is held.
    var idleLimit: Duration?
    /// When it locks itself however much it is used; nil for never.
    var end: ContinuousClock.Instant?
  }

  struct State {
    var assets: [String: SpaceAsset] = [:]
    var rows: [String: [UInt8]] = [:]
    var closed = false
  }

  init(folder: String, slot: Int, kdf: KDFParameters, key: SecretKey)
    throws(DarkroomError)
  {
    self.folder = folder
    self.slot = slot
    self.kdf = kdf
    keys = SpaceKeys(key)
    catalog = try SpaceCatalog(path: folder + "/catalog")
    state = Locked(State())
    try reload()
  }

  // MARK: Opening

  /// The answer to any password that opens no space: it says nothing else.
  static func noSpace(_ folder: String) -> DarkroomError {
    DarkroomError(.invalidArgument, file: folder, "no space opens with this password")
  }

  /// Opens the space that `password` opens in `folder`.
  ///
  /// - Throws: "no space opens with this password" (`invalidArgument`), whether the folder
  ///   holds no space, one, or eight; `notFound` or `corrupt` for a folder without a header
  ///   or with a damaged one.
  public static func open(_ folder: String, password: [UInt8]) throws(DarkroomError) -> Space {
    let header = try SpaceHeader.read(folder)
    guard let (slot, key) = try header.open(password) else { throw noSpace(folder) }
    return try Space(folder: folder, slot: slot, kdf: header.slots[slot].kdf, key: key)
  }

  /// Makes a space with `password` in `folder`, making the folder and its header when there
  /// is none.
  ///
  /// The header cannot tell which of its slots are in use: the new space takes a slot at
  /// random among those that none of `otherPasswords` opens. A space in `folder` whose
  /// password is not among them may be overwritten (docs/spaces.md).
  ///
  /// - Throws: `invalidArgument` when `password` already opens a space here, or no slot is
  ///   left; `io` when the folder cannot be written.
  package static func create(
    at folder: String, password: [UInt8], otherPasswords: [[UInt8]] = [],
    kdf: KDFParameters = .standard, slots: Int = 8
  ) throws(DarkroomError) -> Space {
    guard !password.isEmpty else {
      throw DarkroomError(.invalidArgument, file: folder, "the password is empty")
    }
    var header: SpaceHeader
    if FileManager.default.fileExists(atPath: folder + "/header") {
      header = try SpaceHeader.read(folder)
    } else {
      try makeFolder(folder)
      try makeFolder(folder + "/objects")
      header = SpaceHeader.new(slots: slots, kdf: kdf)
    }
    guard try header.open(password) == nil else {
      throw DarkroomError(.invalidArgument, file: folder, "this password already opens a space")
    }
    var used = Set<Int>()
    for other in otherPasswords {
      if let (slot, _) = try header.open(other) { used.insert(slot) }
    }
    guard let slot = (0..<header.slots.count).filter({ !used.contains($0) }).randomElement()
    else {
      throw DarkroomError(.invalidArgument, file: folder, "every key slot is in use")
    }
    let kdfOfSlot = header.slots[slot].kdf
    guard
      let passwordKey = Sodium.passwordKey(
        password, salt: header.salt, ops: kdfOfSlot.ops, memory: kdfOfSlot.memory)
    else { throw DarkroomError(.engine, "Argon2id could not run (out of memory?)") }
    let key = Sodium.randomKey()
    header.fill(slot, with: key, passwordKey: passwordKey)
    try header.write(folder)
    return try Space(folder: folder, slot: slot, kdf: kdfOfSlot, key: key)
  }

  static func makeFolder(_ path: String) throws(DarkroomError) {
    guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
      throw AtomicFile.writeError(path, errno)
    }
  }

  /// Seals this space's key under `password` in its own slot; nothing else changes.
  ///
  /// - Throws: `invalidArgument` when `password` is empty or opens another space.
  public func changePassword(to password: [UInt8]) throws(DarkroomError) {
    try withWriteLock { () throws(DarkroomError) in
      var (header, passwordKey) = try sealingKey(for: password)
      header.fill(slot, with: keys.space, passwordKey: passwordKey)
      try header.write(folder)
    }
  }

  /// The folder's header and the key that seals this space's slot under `password`.
  ///
  /// - Throws: `invalidArgument` when `password` is empty or opens another space; `engine`
  ///   when Argon2id cannot run.
  func sealingKey(for password: [UInt8]) throws(DarkroomError) -> (SpaceHeader, SecretKey) {
    guard !password.isEmpty else {
      throw DarkroomError(.invalidArgument, file: folder, "the password is empty")
    }
    let header = try SpaceHeader.read(folder)
    if let (other, _) = try header.open(password), other != slot {
      throw DarkroomError(.invalidArgument, file: folder, "this password already opens a space")
    }
    guard
      let passwordKey = Sodium.passwordKey(
        password, salt: header.salt, ops: kdf.ops, memory: kdf.memory)
    else { throw DarkroomError(.engine, "Argon2id could not run (out of memory?)") }
    return (header, passwordKey)
  }

  /// Locks the space: its keys are zeroed and its index forgotten now, whoever still holds
  /// it (a server's request under way then fails, and nothing can be written with it).
  public func close() {
    let idle = keeping.withLock { keeping in
      keeping.locked = true
      return keeping.users == 0
    }
    state.withLock { $0 = State(closed: true) }
    // Work under way stops at its next step (its worker ends now, an encode asks
    // ``isClosed``) and writes nothing; the keys are zeroed when it has ended, never under
    // it: a seal with a zeroed key would be readable by anyone.
    if idle { keys.wipe() }
    workers.withLock { pool in
      defer { pool = nil }
      return pool
    }?.shutDown()
    idleTimer.withLock { timer in
      defer { timer = nil }
      return timer
    }?.cancel()
  }

  /// Runs `body`, which seals or decrypts with the space's keys, keeping them: a lock while
  /// it runs zeroes them when it ends.
  ///
  /// - Throws: "the space is locked" when it is; what `body` throws.
  func using<T>(_ body: () throws(DarkroomError) -> T) throws(DarkroomError) -> T {
    try keeping.withLock { keeping throws(DarkroomError) in
      guard !keeping.locked else { throw Self.closedError(folder) }
      keeping.users += 1
    }
    defer {
      let last = keeping.withLock { keeping in
        keeping.users -= 1
        keeping.lastUse = max(keeping.lastUse, .now)
        return keeping.locked && keeping.users == 0
      }
      if last { keys.wipe() }
    }
    return try body()
  }

  /// `renderer`, its workers replaced by this space's own: a worker that decrypted one
  /// space's photo may be compromised by it, and must not see another's, nor anything of
  /// the library's. A renderer given no workers in a process that routes work to workers
  /// (``Containment``: the command line's, for some formats and every video) gets them
  /// too, for every format: what it would have decoded here is decoded beside none of the
  /// space's keys. In a process without workers, it stays as it is.
  func ownRenderer(_ renderer: Renderer) -> Renderer {
    guard let configuration = Self.ownConfiguration(renderer, routed: Containment.configuration)
    else { return renderer }
    var own = renderer
    own.workers = workers.withLock { pool in
      // None is started for a locked space (its work fails on its keys; no pool outlives it).
      if pool == nil && !isClosed { pool = WorkerPool(configuration) }
      return pool
    }
    return own
  }

  /// `AssetMetadata.read(source)` by this space's own workers where the process decodes in
  /// workers (never the library's: a header read is handed the whole decrypted photo), else
  /// here.
  func readMetadata(_ source: ImageSource) throws(DarkroomError) -> AssetMetadata {
    guard let pool = ownRenderer(Renderer()).workers as? WorkerPool else {
      return try AssetMetadata.read(source)
    }
    var metadata = try pool.metadata(source, limit: Containment.timeLimit)
    metadata.locate()
    return metadata
  }

  /// The configuration of a space's own workers for `renderer`: its pool's, or, for a
  /// renderer given none, that of the workers the process routes work to (`routed`); nil
  /// for none.
  static func ownConfiguration(_ renderer: Renderer, routed: WorkerPool.Configuration?)
    -> WorkerPool.Configuration?
  {
    var own: WorkerPool.Configuration?
    if let shared = renderer.workers as? WorkerPool {
      own = shared.configuration
    } else if renderer.workers == nil {
      own = routed
    }
    // A space's own workers serve people's renders: never ones that lower themselves.
    own?.background = false
    return own
  }

  /// This space's own workers, once a render or edit has started them (for tests).
  var ownWorkers: WorkerPool? { workers.withLock { $0 } }

  /// Zeroes a password once it has been used, in a way the compiler cannot leave out.
  public static func wipe(_ password: inout [UInt8]) { Sodium.wipe(&password) }

  /// True once ``close()`` has run.
  public var isClosed: Bool { state.withLock { $0.closed } }

  // MARK: The catalog

  /// How many assets the space holds, trashed ones too.
  public var count: Int { state.withLock { $0.assets.count } }

  /// Every asset of the space, oldest first (trashed ones too; see ``SpaceAsset/trashed``).
  var assets: [SpaceAsset] {
    state.withLock { $0.assets.values }.sorted { ($0.added, $0.id) < ($1.added, $1.id) }
  }

  /// The asset with this id, or the one asset with this name.
  ///
  /// - Throws: `notFound` for neither; `invalidArgument` for a name that several assets have.
  func asset(_ reference: String) throws(DarkroomError) -> SpaceAsset {
    let all = state.withLock { $0.assets }
    if let asset = all[reference] { return asset }
    let named = all.values.filter { $0.name == reference }
    guard named.count < 2 else {
      throw DarkroomError(
        .invalidArgument, file: reference,
        "\(named.count) assets have this name; name it by its id")
    }
    guard let asset = named.first else {
      throw DarkroomError(.notFound, file: reference, "no asset with this id or name in the space")
    }
    return asset
  }

  /// The asset with this id (32 hex digits), if the space has it.
  func asset(id: String) -> SpaceAsset? { state.withLock { $0.assets[id] } }

  /// Reads the catalog again (another process may have written) and forgets what it had.
  func reload() throws(DarkroomError) { try reload(recovering: false) }

  /// One read of the catalog: the asset rows become the index; with `recovering`, the
  /// objects that pending rows name are removed, and those rows with them.
  private func reload(recovering: Bool) throws(DarkroomError) {
    var fresh = State()
    guard !isClosed else { throw Self.closedError(folder) }
    for (row, body) in try catalog.load(key: keys.catalog) {
      if let asset = body.asset {
        fresh.assets[asset.id] = asset
        fresh.rows[asset.id] = row
      } else if recovering, let pending = body.pending {
        for name in pending { removeObject(name) }
        try catalog.commit([(row, nil)], key: keys.catalog)
      } else if recovering, body.rotation != nil || body.rotatedFrom != nil {
        try recoverRotation(row, body)
      }
    }
    try state.withLock { state throws(DarkroomError) in
      guard !state.closed else { throw Self.closedError(folder) }
      state = fresh
    }
  }

  static func closedError(_ folder: String) -> DarkroomError {
    DarkroomError(.invalidArgument, file: folder, "the space is locked")
  }

  // MARK: Writing

  /// Runs `body` holding the folder's write lock, after recovering what a killed writer of
  /// this space left and reading the catalog afresh.
  func withWriteLock<T>(_ body: () throws(DarkroomError) -> T) throws(DarkroomError) -> T {
    try using { () throws(DarkroomError) in try withFolderLock(body) }
  }

  private func withFolderLock<T>(_ body: () throws(DarkroomError) -> T) throws(DarkroomError)
    -> T
  {
    let path = folder + "/lock"
    let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw AtomicFile.writeError(path, errno) }
    defer { Glibc.close(fd) }
    while flock(fd, LOCK_EX) != 0 {
      guard errno == EINTR else { throw AtomicFile.writeError(path, errno) }
    }
    try recover()
    return try body()
  }

  /// Removes the objects of writes that never committed (a row listing them, made before
  /// they were written), then reads the catalog.
  private func recover() throws(DarkroomError) { try reload(recovering: true) }

  func objectPath(_ name: String) -> String { folder + "/objects/" + name.prefix(2) + "/" + name }

  func removeObject(_ name: String) {
    let path = objectPath(name)
    unlink(path)
    unlink(path + ".partial")
  }

  /// A partial file's path of its own for an object at `path` that processes may write at
  /// once (a rendition: no catalog row names it, and the first made stays).
  static func uniquePartial(_ path: String) -> String {
    path + ".\(getpid()).\(UInt32.random(in: 0...UInt32.max)).partial"
  }

  func prepare(_ name: String) throws(DarkroomError) {
    try Self.makeFolder(folder + "/objects/" + name.prefix(2))
  }

  static func newName() -> String { hex(Sodium.random(16)[...]) }

  /// Records `objects` as pending before they are written, so that recovery removes them
  /// if this process dies before `commit`.
  private func stage(_ objects: [String]) throws(DarkroomError) -> [UInt8] {
    let row = Sodium.random(16)
    try catalog.commit([(row, SpaceCatalog.Body(pending: objects))], key: keys.catalog)
    return row
  }

  /// Commits `assets` and drops the pending row in one transaction; then removes `garbage`
  /// (objects no row needs any more), recorded as pending until they are gone.
  private func commit(
    _ assets: [SpaceAsset], pending: [UInt8]?, removing garbage: [String] = []
  ) throws(DarkroomError) {
    var rows = state.withLock { $0.rows }
    var changes: [(id: [UInt8], body: SpaceCatalog.Body?)] = []
    for asset in assets {
      let row = rows[asset.id] ?? Sodium.random(16)
      rows[asset.id] = row
      changes.append((row, SpaceCatalog.Body(asset: asset)))
    }
    if let pending { changes.append((pending, nil)) }
    let garbageRow = garbage.isEmpty ? nil : Sodium.random(16)
    if let garbageRow { changes.append((garbageRow, SpaceCatalog.Body(pending: garbage))) }
    try catalog.commit(changes, key: keys.catalog)
    state.withLock { state in
      for asset in assets {
        state.assets[asset.id] = asset
        state.rows[asset.id] = rows[asset.id]
      }
    }
    if let garbageRow {
      for name in garbage { removeObject(name) }
      try catalog.commit([(garbageRow, nil)], key: keys.catalog)
    }
  }

  /// Undoes a write that failed before its commit.
  private func abandon(_ pending: [UInt8], _ objects: [String]) {
    for name in objects { removeObject(name) }
    try? catalog.commit([(pending, nil)], key: keys.catalog)
  }

  /// Writes `bytes` as a new object and returns its name (the caller has staged it).
  func writeObject(_ name: String, _ bytes: [UInt8]) throws(DarkroomError) {
    try prepare(name)
    try SpaceObject.write(bytes, name: name, to: objectPath(name), keys: keys)
  }

  // MARK: Adding

  /// Encrypts the file at `path` into the space. With `move`, the file is removed once its
  /// object and catalog row are durable, and only if it did not change meanwhile.
  ///
  /// - Returns: the asset, and false when the space already had these bytes (then nothing is
  ///   added, and a moved file is still removed, unless that asset is in the trash: then the
  ///   call throws `conflict` and the file is kept).
  /// - Throws: what reading the image's header throws (not an image, a damaged header);
  ///   `io` for a failed write, which leaves nothing behind.
  func add(file path: String, move: Bool = false) throws(DarkroomError)
    -> (asset: SpaceAsset, added: Bool)
  {
    let file = try InputFile(path)
    let before = file.identity
    let media = try SpaceMedia.read(
      head: try file.read(at: 0, count: 64)[...], source: ByteSource(file: file), name: path,
      image: { () throws(DarkroomError) in try readMetadata(.file(path)) })
    let result = try withWriteLock { () throws(DarkroomError) in
      try add(
        name: URL(fileURLWithPath: path).lastPathComponent, length: file.size,
        metadata: { _ in media }
      ) { offset, count throws(DarkroomError) in
        let bytes = try file.read(at: offset, count: count)
        guard bytes.count == count else {
          throw DarkroomError(.truncated, file: path, "the file shrank while it was read")
        }
        return bytes
      }
    }
    if move {
      // As a folder's add: a moved file whose bytes the space has as an asset in its trash
      // is kept (the trash is for leaving).
      guard result.added || !result.asset.trashed else {
        throw DarkroomError(
          .conflict, file: path,
          "the space has these bytes as \(result.asset.name), which is in the trash: restore "
            + "it; kept here")
      }
      try file.removeMoved(
        unchangedSince: before,
        changed: "changed while it was encrypted; it is in the space, and kept here")
    }
    return result
  }

  /// Encrypts image or video bytes (an upload) into the space, once `check` accepts their
  /// header; see ``add(file:move:)``.
  func add(
    bytes: [UInt8], name: String, check: (SpaceMedia) throws(DarkroomError) -> Void = { _ in }
  ) throws(DarkroomError) -> (asset: SpaceAsset, added: Bool) {
    let media = try SpaceMedia.read(
      head: bytes.prefix(64), source: ByteSource(memory: bytes), name: name,
      image: { () throws(DarkroomError) in try readMetadata(.data(bytes, name: name)) })
    try check(media)
    return try withWriteLock { () throws(DarkroomError) in
      try add(name: name, length: bytes.count, metadata: { _ in media }) { offset, count in
        Array(bytes[offset..<offset + count])
      }
    }
  }

  /// Encrypts an upload into the space as it arrives, `length` bytes that `next(count)`
  /// gives in order (fewer than asked only at their end): sealed chunk by chunk, so that no
  /// more than a batch of chunks and the first ``streamedHeaderBytes`` are in memory at once.
  /// Its header is read from those first bytes (a video's from the sealed object, a chunk at
  /// a time as its header needs; an image's from the sealed object decrypted, in the rare
  /// image whose header lies beyond them; bytes no format claims are refused unread) and
  /// checked by `check` before it is committed; a refusal, or bytes that end early, leave
  /// nothing in the space.
  func add(
    streaming next: (Int) throws(DarkroomError) -> [UInt8], length: Int, name: String,
    check: (SpaceMedia) throws(DarkroomError) -> Void
  ) throws(DarkroomError) -> (asset: SpaceAsset, added: Bool) {
    var head: [UInt8] = []
    return try withWriteLock { () throws(DarkroomError) in
      try add(
        name: name, length: length,
        metadata: { object throws(DarkroomError) in
          // A video's index may be at its end: read from the sealed object, as far as its
          // header needs, a chunk at a time.
          let sealed = try SpaceObjectReader(
            path: objectPath(object), name: object, keys: keys, label: name)
          let media = try SpaceMedia.read(head: head.prefix(64), source: sealed.source, name: name)
          {
            () throws(DarkroomError) in
            do throws(DarkroomError) {
              return try readMetadata(.data(head, name: name))
            } catch  where head.count < length && error.kind != .unsupportedFormat {
              // An image whose header lies past the first bytes: read from all of it. (What
              // is no image at all is refused from its first bytes, never decrypted whole.)
              return try readMetadata(.data(sealed.readAll(), name: name))
            }
          }
          try check(media)
          return media
        }
      ) { _, count throws(DarkroomError) in
        let bytes = try next(count)
        guard bytes.count == count else {
          throw DarkroomError(
            .truncated, file: name, "the upload ended after \(head.count) of \(length) bytes")
        }
        if head.count < Self.streamedHeaderBytes {
          head += bytes.prefix(Self.streamedHeaderBytes - head.count)
        }
        return bytes
      }
    }
  }

  /// How many of an upload's first bytes are kept to read its header from.
  static let streamedHeaderBytes = 4 << 20

  /// Seals `length` bytes that `read` gives as a new object, then reads the asset's header
  /// (`metadata`, given the object's name) and commits it, or leaves nothing.
  private func add(
    name: String, length: Int,
    metadata readMetadata: (String) throws(DarkroomError) -> SpaceMedia,
    read: (Int, Int) throws(DarkroomError) -> [UInt8]
  ) throws(DarkroomError) -> (asset: SpaceAsset, added: Bool) {
    let object = Self.newName()
    let pending = try stage([object])
    let hasher = KeyedHasher(key: keys.names)
    do {
      try prepare(object)
      try SpaceObject.write(
        name: object, length: length, to: objectPath(object), keys: keys,
        alongside: { hasher.update($0) }, read: read)
    } catch {
      abandon(pending, [object])
      throw error
    }
    FaultInjection.point("space-object-durable")
    let identity = hex(hasher.finish().prefix(16))
    if let existing = state.withLock({ $0.assets.values.first { $0.identity == identity } }) {
      abandon(pending, [object])
      return (existing, false)
    }
    let media: SpaceMedia
    do {
      media = try readMetadata(object)
    } catch {
      abandon(pending, [object])
      throw DarkroomError.notAPhoto(error, name: name)
    }
    let asset = SpaceAsset(
      id: Self.newName(), name: name, added: Double(AssetID.nowMilliseconds()) / 1000,
      format: media.format, width: media.width, height: media.height,
      byteSize: length, identity: identity, original: object, adjustments: nil, rendered: nil,
      editVersion: 0, trashed: false, motionVideo: media.motionVideo, duration: media.duration)
    try commit([asset], pending: pending)
    return (asset, true)
  }

  // MARK: Reading

  /// A reader of one of `asset`'s objects; errors name the asset.
  func reader(_ object: String, of asset: SpaceAsset) throws(DarkroomError) -> SpaceObjectReader {
    try SpaceObjectReader(path: objectPath(object), name: object, keys: keys, label: asset.name)
  }

  /// The original's bytes, decrypted into memory.
  func original(_ asset: SpaceAsset) throws(DarkroomError) -> [UInt8] {
    try reader(asset.original, of: asset).readAll()
  }

  /// The asset as it looks now: the edit's full-size result, or the original.
  func current(_ asset: SpaceAsset) throws(DarkroomError) -> [UInt8] {
    try reader(asset.rendered ?? asset.original, of: asset).readAll()
  }

  /// The size in bytes of the asset as it looks now (read from its object's sealed header).
  func currentSize(_ asset: SpaceAsset) throws(DarkroomError) -> Int {
    try reader(asset.rendered ?? asset.original, of: asset).length
  }

  /// Bytes `range` of the asset as it looks now, decrypting only the chunks they are in.
  func current(_ asset: SpaceAsset, range: Range<Int>) throws(DarkroomError) -> [UInt8] {
    try reader(asset.rendered ?? asset.original, of: asset).read(range)
  }

  // MARK: Kept renditions

  /// The keyed name of an object made from `parts` (a rendition: what it is of, and what
  /// made it), which says nothing of them without the keys.
  func keyedName(_ parts: [[UInt8]]) -> String { keys.name(parts) }

  /// Kept object `name` (a rendition), decrypted; nil when there is none, or it does not
  /// open (it is made again).
  func kept(_ name: String, label: String) -> [UInt8]? {
    try? using { () throws(DarkroomError) in
      try SpaceObjectReader(path: objectPath(name), name: name, keys: keys, label: label)
        .readAll()
    }
  }

  /// Keeps `bytes` as object `name`, something made again at will (a rendition): through a
  /// partial file of its own, with no catalog row, the first made kept.
  func keep(_ bytes: [UInt8], as name: String) throws(DarkroomError) {
    try using { () throws(DarkroomError) in
      try prepare(name)
      let path = objectPath(name)
      try SpaceObject.write(
        name: name, length: bytes.count, to: path, keys: keys,
        partial: Self.uniquePartial(path), keepingFirst: true
      ) { offset, count in Array(bytes[offset..<offset + count]) }
    }
  }

  // MARK: Editing

  /// Commits a new edit of `asset` (held under the write lock): its adjustment data,
  /// `history` (the new version last), and its result, which `writeResult` writes as the
  /// object it is given, are new objects; the previous edit's are removed once the catalog
  /// names the new ones. `size` is the result's (upright), which the asset's row then says.
  /// A failure leaves the asset as it was.
  func commitEdit(
    _ asset: SpaceAsset, history: [AdjustmentData], size: (width: Int, height: Int),
    writeResult: (String) throws(DarkroomError) -> Void
  ) throws(DarkroomError) -> SpaceAsset {
    let (adjustments, rendered) = (Self.newName(), Self.newName())
    let pending = try stage([adjustments, rendered])
    do throws(DarkroomError) {
      try writeObject(adjustments, Canonical.json(history))
      try writeResult(rendered)
    } catch {
      abandon(pending, [adjustments, rendered])
      throw error
    }
    FaultInjection.point("space-edit-written")
    var edited = asset
    edited.adjustments = adjustments
    edited.rendered = rendered
    edited.editVersion = history.last?.version ?? asset.editVersion
    (edited.editedWidth, edited.editedHeight) = (size.width, size.height)
    try commit(
      [edited], pending: pending, removing: [asset.adjustments, asset.rendered].compactMap { $0 })
    return edited
  }

  /// The asset's edits, oldest first (empty for an unedited asset).
  func history(_ asset: SpaceAsset) throws(DarkroomError) -> [AdjustmentData] {
    guard let object = asset.adjustments else { return [] }
    let bytes = try reader(object, of: asset).readAll()
    do {
      return try JSONDecoder().decode([AdjustmentData].self, from: Data(bytes))
    } catch {
      throw DarkroomError(.corrupt, file: asset.name, "its adjustment data does not parse")
    }
  }

  /// Back to the original: the edit's objects are removed.
  /// - Returns: the asset as it was under the lock, and as it is after.
  func revert(_ asset: SpaceAsset) throws(DarkroomError) -> (before: SpaceAsset, after: SpaceAsset)
  {
    try withWriteLock { () throws(DarkroomError) in
      let asset = try self.asset(asset.id)
      guard asset.editVersion > 0 else { return (asset, asset) }
      var reverted = asset
      reverted.adjustments = nil
      reverted.rendered = nil
      reverted.editVersion = 0
      (reverted.editedWidth, reverted.editedHeight) = (nil, nil)
      try commit(
        [reverted], pending: nil,
        removing: [asset.adjustments, asset.rendered].compactMap { $0 })
      return (asset, reverted)
    }
  }

  /// Moves assets to the space's trash, or back (`trashed: false`).
  func setTrashed(_ assets: [SpaceAsset], _ trashed: Bool) throws(DarkroomError) {
    try withWriteLock { () throws(DarkroomError) in
      var changed: [SpaceAsset] = []
      for asset in assets {
        var current = try self.asset(asset.id)
        guard current.trashed != trashed else { continue }
        current.trashed = trashed
        current.trashedAt = trashed ? Double(AssetID.nowMilliseconds()) / 1000 : nil
        changed.append(current)
      }
      if !changed.isEmpty { try commit(changed, pending: nil) }
    }
  }
}

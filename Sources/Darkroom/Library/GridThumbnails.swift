import Dispatch
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

extension RenditionSpec {
  /// Formats every browser shows. AVIF is left out: not every libvips has its encoder
  /// (Debian's does not), and a missing encoder is not the file's fault.
  package static let browserFormats: [ImageFormat] = [.jpeg, .png, .webp]

  /// This spec as a browser is sent it: a rendition of a source in a format browsers do not
  /// show (HEIC, JPEG XL, TIFF, AVIF) is WebP for a browser that takes it, else JPEG; a JPEG,
  /// PNG or WebP source keeps its format; `full`, and a spec that names its format, are left
  /// as they are. Each format is a rendition of its own, cached and tagged as any other.
  package func shownInBrowser(sourceFormat: String, acceptsWebP: Bool) -> RenditionSpec {
    guard format == nil, representation != .full,
      !Self.browserFormats.contains(ImageFormat(sourceFormat: sourceFormat) ?? .jpeg)
    else { return self }
    var shown = self
    shown.format = acceptsWebP ? .webp : .jpeg
    return shown
  }
}

/// The thumbnails the gallery's grid shows: what it asks the server for, so that they can be
/// made before anyone asks (``Library/makeGridThumbnails(_:progress:)``).
package enum GridThumbnail {
  /// The aspect-thumbnail sizes the gallery asks for (its long side, in pixels), so that a
  /// few sizes serve every screen and are cached (`gallery.js`).
  package static let sizes = [128, 256, 384, 512, 768, 1024]
  /// The height of the gallery's rows on a wide screen, in CSS pixels (`gallery.js`).
  package static let rowHeight = 184.0

  /// The size the gallery asks for `asset` in a row `rowHeight` CSS pixels high, on a screen
  /// of `density` device pixels a CSS pixel: the smallest of ``sizes`` that covers the
  /// photo's long side (its width when wider than high).
  package static func size(for asset: Asset, rowHeight: Double = rowHeight, density: Double)
    -> Int
  {
    // As the gallery lays it out: the shape its thumbnail shows (an edit made elsewhere's).
    let shown = asset.shownSize
    let aspect = shown.height > 0 ? Double(shown.width) / Double(shown.height) : 1
    let need = rowHeight * density * max(1, aspect)
    return sizes.first { Double($0) >= need } ?? 1024
  }

  /// What the gallery is sent for `asset` at `density`: its aspect thumbnail at ``size(for:rowHeight:density:)``,
  /// metadata stripped, in a format the browser shows.
  package static func spec(for asset: Asset, density: Double, acceptsWebP: Bool = true)
    -> RenditionSpec
  {
    var spec = RenditionSpec(.aspectThumbnail)
    spec.size = size(for: asset, density: density)
    spec.metadata = .strip
    return spec.shownInBrowser(sourceFormat: asset.format, acceptsWebP: acceptsWebP)
  }
}

/// How ``Library/makeGridThumbnails(_:progress:)`` works.
package struct GridThumbnailOptions: Sendable {
  /// Screen densities to make the gallery's thumbnails for (device pixels a CSS pixel): 2 by
  /// default, a laptop's or a phone's (a smaller size asked by another screen is made from
  /// that one, not from the original).
  package var densities: [Double] = [2]
  /// At most this many assets looked at (nil: every one).
  package var limit: Int?
  /// Asked before each asset: true stops the pass (what is made stays; the next pass goes
  /// on from what the cache lacks).
  package var shouldStop: @Sendable () -> Bool = { false }
  /// Called before each render: a server waits here while people's own requests render.
  package var beforeRender: @Sendable () -> Void = {}
  /// How the photos are rendered (its workers: a server's pass has its own).
  package var pixels = PixelSettings()
  /// Whether this process is recorded as the library's pass while it holds the lock, so
  /// that `darkroom thumbnails --stop` finds it (``Library/runThumbnailPass(lowPriority:_:progress:)``).
  package var recordsProcess = false

  package init() {}
}

/// What a pass of ``Library/makeGridThumbnails(_:progress:)`` did.
package struct GridThumbnailSummary: Sendable, Codable, Equatable {
  /// Photos looked at, newest first.
  package var assets = 0
  /// Thumbnails made now, and those the cache had.
  package var made = 0
  package var had = 0
  /// Photos that could not be rendered (damaged, not allowed): `path: problem`, the first 100.
  package var failed = 0
  package var problems: [String] = []
  /// Stopped before the end (asked to, or another pass holds the library's thumbnail lock).
  package var stopped = false
  /// Another process's pass was under way: this one did nothing.
  package var busy = false
  package var seconds = 0.0

  package init() {}
}

extension Library {
  /// Makes the thumbnails the gallery's grid will ask for that the rendition cache lacks, for
  /// every visible photo and video (its poster), newest first: what runs in the background after a scan and in a
  /// server, so that a person opening the gallery sees real thumbnails.
  ///
  /// One render at a time (one core), through the sandboxed workers with their limits, as a
  /// request's. Resumable by construction: what is cached is found in the cache (one look
  /// up by the catalog's content hash) and not made again, so a pass killed at any point goes
  /// on where it was when run again. One pass a library at a time: a second, in this
  /// process or another, returns at once with ``GridThumbnailSummary/busy``.
  ///
  /// - Throws: what the catalog throws. A photo that cannot be rendered is counted in
  ///   ``GridThumbnailSummary/failed``, not thrown.
  package func makeGridThumbnails(
    _ options: GridThumbnailOptions = GridThumbnailOptions(),
    progress: (@Sendable (GridThumbnailSummary) -> Void)? = nil
  ) throws(DarkroomError) -> GridThumbnailSummary {
    try thumbnailPass(options) { (summary) throws(DarkroomError) in
      var query = AssetQuery()
      query.sort = .dateDescending
      while true {
        let page = try page(of: query, limit: 500)
        for asset in page.assets {
          if let limit = options.limit, summary.assets >= limit { return }
          guard try takeGridThumbnails(of: asset, options, &summary) else { return }
          progress?(summary)
        }
        guard let next = page.next else { return }
        query.after = next
      }
    }
  }

  /// The grid's thumbnails of these assets that the cache lacks (new or changed photos, as the
  /// change log names them), under the same lock as a whole pass.
  package func makeGridThumbnails(
    of ids: [AssetID], _ options: GridThumbnailOptions = GridThumbnailOptions()
  ) throws(DarkroomError) -> GridThumbnailSummary {
    try thumbnailPass(options) { (summary) throws(DarkroomError) in
      for asset in try assets(withIDs: ids)
      where asset.trashedAt == nil && !asset.isHidden {
        guard try takeGridThumbnails(of: asset, options, &summary) else { return }
      }
    }
  }

  /// A pass under the library's thumbnail lock (busy when another holds it), timed.
  private func thumbnailPass(
    _ options: GridThumbnailOptions,
    _ body: (inout GridThumbnailSummary) throws(DarkroomError) -> Void
  ) throws(DarkroomError) -> GridThumbnailSummary {
    let started = DispatchTime.now()
    var summary = GridThumbnailSummary()
    guard let lock = try thumbnailLock() else {
      summary.busy = true
      return summary
    }
    defer { Glibc.close(lock) }
    if options.recordsProcess {
      try recordedAsThePass { () throws(DarkroomError) in try body(&summary) }
    } else {
      try body(&summary)
    }
    summary.seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
    return summary
  }

  /// One photo of a pass, unless the pass is asked to stop (then false, and `stopped`).
  private func takeGridThumbnails(
    of asset: Asset, _ options: GridThumbnailOptions, _ summary: inout GridThumbnailSummary
  ) throws(DarkroomError) -> Bool {
    if options.shouldStop() {
      summary.stopped = true
      return false
    }
    summary.assets += 1
    try gridThumbnails(of: asset, options, &summary)
    return true
  }

  private func gridThumbnails(
    of asset: Asset, _ options: GridThumbnailOptions, _ summary: inout GridThumbnailSummary
  ) throws(DarkroomError) {
    guard let content = ContentHash(hex: asset.contentHash) else { return }
    // A damaged file of which nothing decodes: its tile is its sentence, nothing to make.
    if !asset.isShowable { return }
    // Looked at, not used: what a pass finds is not marked recently used (a lookup would
    // touch every thumbnail of the library on each server start).
    let cached = Set(RenditionCache(folder: cacheFolder).entries(of: content).map(\.key))
    var specs: [RenditionSpec] = []
    for density in options.densities {
      let spec = GridThumbnail.spec(for: asset, density: density).showing(asset)
      if !specs.contains(spec) { specs.append(spec) }
    }
    for spec in specs {
      if cached.contains(Representations.key(spec)) {
        summary.had += 1
        continue
      }
      options.beforeRender()
      do {
        _ = try render(asset.id, spec, settings: options.pixels)
        summary.made += 1
        FaultInjection.point("after-grid-thumbnail")
      } catch  where error.kind == .io && error.file == nil {
        throw error  // the cache or the catalog, not the photo
      } catch {
        summary.failed += 1
        if summary.problems.count < 100 { summary.problems.append("\(error)") }
        return
      }
    }
  }

  /// The library's thumbnail-pass lock, held (an open descriptor to close), or nil when
  /// another pass holds it.
  private func thumbnailLock() throws(DarkroomError) -> Int32? {
    let folder = metadataFolder.path + "/locks"
    let path = folder + "/thumbnails"
    mkdir(folder, 0o755)
    let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
    guard fd >= 0 else {
      throw DarkroomError(.io, file: path, "cannot be opened: \(String(cString: strerror(errno)))")
    }
    switch FileLock.lock(fd, key: 0, wait: false) {
    case 0: return fd
    case 1:
      Glibc.close(fd)
      return nil
    default:
      Glibc.close(fd)
      throw DarkroomError(.io, file: path, "cannot be locked: \(String(cString: strerror(errno)))")
    }
  }
}

extension Library {
  /// The JPEG thumbnail the camera embedded in a photo, read where the scan found it: one
  /// read of a few kilobytes, nothing decoded (what the gallery shows until the photo's own
  /// thumbnail is made). Served as the bytes are; the file is checked to be the one scanned.
  ///
  /// - Throws: `notFound` for an asset without one (or in a space), or whose file changed
  ///   since the scan (scan again); `corrupt` when the bytes there are not a JPEG's.
  package func exifThumbnail(of asset: Asset) throws(DarkroomError) -> [UInt8] {
    guard keeps(.embeddedThumbnails), asset.mediaType == .photo, let range = asset.exifThumbnail
    else {
      throw DarkroomError(.notFound, file: asset.path, "has no embedded thumbnail")
    }
    let file = try Beneath.openFile(asset.path, in: rootPath)
    guard file.identity == asset.identity else {
      throw DarkroomError(
        .notFound, file: asset.path, "has changed since it was scanned: scan it again")
    }
    let bytes = try file.read(at: range.offset, count: range.length)
    guard bytes.count == range.length, bytes.starts(with: [0xFF, 0xD8]) else {
      throw DarkroomError(.corrupt, file: asset.path, "the embedded thumbnail is not a JPEG")
    }
    return bytes
  }
}

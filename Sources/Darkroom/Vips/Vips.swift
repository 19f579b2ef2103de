import CVipsShim
import Dispatch

/// libvips' process-wide state: loaded and started once, on first use, from any thread.
enum Vips {
  /// Swift runs a static initialiser exactly once, thread-safely, so this is the only place
  /// libvips is loaded and `vips_init` called. Work that needs no pixels (metadata of JPEG
  /// and PNG, cache hits) never pays the ~65 ms this costs.
  private static let startup: Result<Void, DarkroomError> = {
    if dr_vips_init("darkroom") != 0 {
      return .failure(takeError(context: "cannot start libvips"))
    }
    // Defence in depth behind TrustedFormats: libvips' own untrusted loaders stay blocked
    // unless some format beyond the trusted ones was allowed (and then every module loads).
    _ = dr_vips_block_untrusted(TrustedFormats.allowed.isEmpty ? 1 : 0)
    // A sandboxed worker reads JPEG XL without being told: its loader alone is let through.
    if TrustedFormats.permits("jxl") { _ = dr_vips_unblock_operation("VipsForeignLoadJxl") }
    if !TrustedFormats.allowed.isEmpty {
      for module in ["heif", "jxl", "magick", "poppler", "openslide"] {
        _ = dr_vips_load_module(module)
      }
    }
    return .success(())
  }()

  static func start() throws(DarkroomError) {
    try startup.get()
  }

  /// Starts libvips on another thread, for a caller that will need it after some work of
  /// its own (reading a file); `start()` then waits for it, or returns at once.
  static func startInBackground() {
    DispatchQueue.global(qos: .userInitiated).async { _ = try? start() }
  }

  /// The longest libvips detail an error line carries.
  static let maxDetail = 160

  /// Loads the libvips module that reads `format`, if it has one and it is not loaded yet
  /// (libvips starts without its modules: see `dr_vips_init`). HEIF and AVIF are the only
  /// trusted formats in a module.
  static func prepareLoader(for format: String?) throws(DarkroomError) {
    guard let format, ["heif", "avif", "jxl"].contains(format) else { return }
    try start()
    _ = dr_vips_load_module(format == "jxl" ? "jxl" : "heif")
  }

  /// Takes libvips' pending error text (and clears it) as a `DarkroomError`. Repeated lines
  /// (a damaged TIFF can warn thousands of times) are kept once, and the whole is cut to one
  /// line of about 200 characters.
  static func takeError(context: String, file: String? = nil) -> DarkroomError {
    var text = ""
    if let copy = dr_error_take() {
      text = String(cString: copy)
      dr_free(copy)
    }
    var seen = Set<String>()
    let lines = text.split(whereSeparator: \.isNewline).map { String($0).trimmingSpaces }
      .filter { !$0.isEmpty && seen.insert($0).inserted }
    var detail = lines.isEmpty ? "libvips failed" : lines.joined(separator: "; ")
    // One line, about 200 characters at most: the first causes are the telling ones.
    if detail.count > maxDetail { detail = String(detail.prefix(maxDetail - 1)) + "…" }
    return DarkroomError(kind(of: detail), file: file, "\(context): \(detail)")
  }

  /// What a libvips message blames: a decoder's complaint about the data (`corrupt`: the
  /// file's fault) or anything else (`engine`: libvips itself, such as a missing encoder).
  static func kind(of detail: String) -> DarkroomError.Kind {
    let text = detail.lowercased()
    let decoders = [
      "vipsjpeg", "jpegload", "pngload", "vipspng", "libpng", "gifload", "webpload", "heifload",
      "tiff2vips", "tiffload", "vipsforeignload", "premature end", "corrupt", "bogus", "truncated",
      "unexpected end", "not a known file format", "read error", "decode", "heif: ", "bad seek",
      "invalid input",
    ]
    return decoders.contains { text.contains($0) } ? .corrupt : .engine
  }

  /// Runs one file's libvips work so that its error message is its own.
  ///
  /// libvips keeps one error buffer per process, which every thread appends to. Work that
  /// ran alone owns what the buffer holds when it fails; work that failed while other work
  /// ran beside it is run once more, alone (new work waits meanwhile), so that the message
  /// names only its own file and cause. Failures are rare, so the second run costs little;
  /// a time-out is not run again. Nested calls on one thread run as part of the outer one.
  /// An error that names no file (libvips could not start, say) is about `file`.
  static func attributingErrors<T>(file: String, _ body: () throws(DarkroomError) -> T)
    throws(DarkroomError) -> T
  {
    do {
      // libvips is loaded before the gate reads its functions (it may be starting on another
      // thread: `startInBackground`).
      try start()
      guard dr_attribution_begin() != 0 else { return try body() }
      let first = Result<T, DarkroomError> { () throws(DarkroomError) in try body() }
      let alone = dr_attribution_end() != 0
      // Whatever its kind: the kind is read from the message, which another thread's lines
      // can change (libheif's "bad seek" made a damaged JPEG's `corrupt` message name two
      // causes, and was not run again when only `engine` ones were).
      guard case .failure(let error) = first, error.kind != .timedOut, !alone else {
        return try first.get()
      }
      dr_attribution_exclusive_begin()
      defer { dr_attribution_exclusive_end() }
      return try body()
    } catch {
      throw error.file == nil ? error.about(file) : error
    }
  }

  /// Sets how many worker threads libvips uses per pipeline (0 restores its default).
  /// A fixed mmap threshold and `arenas` malloc arenas (glibc), through the shim, which
  /// owns the process's C-level tuning.
  static func tuneMalloc(arenas: Int) {
    dr_tune_malloc(Int32(arenas))
  }

  static func setConcurrency(_ threads: Int) throws(DarkroomError) {
    try start()
    dr_concurrency_set(Int32(threads))
  }

  /// How many threads libvips uses per pipeline: this process's share of the cores (a
  /// worker's, in a pool), which a decoder that runs its own threads takes too.
  static var concurrency: Int { Int(dr_concurrency_get()) }
}

/// What the libvips found on this machine can do. Darkroom needs version 8.10 or later,
/// lcms for colour profiles and libexif for orientation; a libvips without them would render
/// washed-out or sideways pictures, so Darkroom refuses such work with a message instead.
///
/// ```swift
/// let libvips = try LibvipsCapabilities.current()
/// print("libvips", libvips.version)
/// if !libvips.missingLoaders.isEmpty { print("cannot read:", libvips.missingLoaders) }
/// ```
///
/// `LibvipsCapabilities` is a `Sendable` value type.
package struct LibvipsCapabilities: Sendable, Equatable {
  /// The libvips version, such as `8.14.1`.
  package var version: String
  /// Built with lcms: embedded ICC profiles can be converted to sRGB.
  package var colourProfiles: Bool
  /// Built with libexif: EXIF orientation is read and applied.
  package var exifOrientation: Bool
  /// Darkroom's formats whose loader this libvips lacks (`heif`, `webp`, ...). Asking loads
  /// the HEIF module, which libvips otherwise loads only for a HEIF file.
  package var missingLoaders: [String] {
    Self.loaders.map(\.format).filter { !Self.hasLoader($0) }
  }

  /// Whether libvips can read `format` (loading its module first, for HEIF).
  static func hasLoader(_ format: String) -> Bool {
    guard let loader = loaders.first(where: { $0.format == format }) else { return true }
    try? Vips.prepareLoader(for: format)
    return dr_vips_has_operation(loader.operation) != 0
  }

  /// The loaders Darkroom relies on, by the format names `AssetMetadata.format` uses.
  static let loaders: [(format: String, operation: String)] = [
    ("jpeg", "jpegload"), ("png", "pngload"), ("webp", "webpload"), ("heif", "heifload"),
    ("tiff", "tiffload"), ("gif", "gifload"),
  ]

  /// The capabilities of the libvips this process loads (loading it if needed).
  ///
  /// The answer is worked out once per process; later calls return it again.
  ///
  /// - Throws: A ``DarkroomError`` of kind `engine` when libvips cannot be loaded, is older
  ///   than 8.10, or cannot start (the same error on every call).
  package static func current() throws(DarkroomError) -> LibvipsCapabilities {
    try found.get()
  }

  private static let found = Result { () throws(DarkroomError) in
    try Vips.start()
    var major: Int32 = 0
    var minor: Int32 = 0
    var micro: Int32 = 0
    dr_vips_version(&major, &minor, &micro)
    return LibvipsCapabilities(
      version: "\(major).\(minor).\(micro)", colourProfiles: dr_vips_has_lcms() != 0,
      exifOrientation: dr_vips_has_exif() != 0)
  }

  /// Refuses work this libvips would get wrong: a format it has no loader for, a rotation
  /// it cannot read, a profile it cannot convert.
  func check(_ metadata: AssetMetadata, convertsColour: Bool, rotates: Bool) throws(DarkroomError) {
    let format = metadata.format == "avif" ? "heif" : metadata.format
    if !Self.hasLoader(format) {
      throw DarkroomError(
        .engine, file: metadata.file,
        "the libvips found (\(version)) has no \(format) loader; install a libvips built with \(format) support"
      )
    }
    if convertsColour && !colourProfiles, let profile = metadata.iccProfile {
      throw DarkroomError(
        .engine, file: metadata.file,
        "cannot convert its colour profile (\(profile.description ?? "embedded")) to sRGB: the libvips found (\(version)) was built without lcms; install a libvips built with lcms"
      )
    }
    if rotates && metadata.orientation.effective != .up && !exifOrientation {
      throw DarkroomError(
        .engine, file: metadata.file,
        "cannot turn it upright (EXIF orientation \(metadata.orientation.effective.rawValue)): the libvips found (\(version)) was built without libexif; install a libvips built with libexif"
      )
    }
  }
}

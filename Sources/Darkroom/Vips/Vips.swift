import CVipsShim

/// libvips' process-wide state: loaded and started once, on first use, from any thread.
enum Vips {
  /// Swift runs a static initialiser exactly once, thread-safely, so this is the only place
  /// libvips is loaded and `vips_init` called. Work that needs no pixels (metadata of JPEG
  /// and PNG, cache hits) never pays the ~65 ms this costs.
  private static let startup: Result<Void, DarkroomError> = {
    if dr_vips_init("darkroom") != 0 {
      return .failure(takeError(context: "starting libvips"))
    }
    return .success(())
  }()

  static func start() throws(DarkroomError) {
    try startup.get()
  }

  /// Takes libvips' pending error text (and clears it) as a `DarkroomError`.
  static func takeError(context: String, file: String? = nil) -> DarkroomError {
    var text = ""
    if let copy = dr_error_take() {
      text = String(cString: copy)
      dr_free(copy)
    }
    let lines = text.split(whereSeparator: \.isNewline).map { String($0).trimmingSpaces }
      .filter { !$0.isEmpty }
    let detail = lines.isEmpty ? "libvips failed" : lines.joined(separator: "; ")
    return DarkroomError(.engine, file: file, "\(context): \(detail)")
  }

  /// The number of libvips images alive in this process; a leak check compares it.
  static var liveImageCount: Int {
    Int(dr_live_image_count())
  }

  /// Sets how many worker threads libvips uses per pipeline (0 restores its default).
  static func setConcurrency(_ threads: Int) throws(DarkroomError) {
    try start()
    dr_concurrency_set(Int32(threads))
  }
}

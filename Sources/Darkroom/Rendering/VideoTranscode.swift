import CVideo

#if canImport(Glibc)
  import Glibc
#endif

/// What a video is transcoded to: the settings of `dr_video_transcode`, as a worker's job
/// carries them.
///
/// `TranscodeSettings` is a `Sendable` value type.
struct TranscodeSettings: Sendable, Hashable, Codable {
  /// The frames fit this box upright (never scaled up); 0: their own size.
  var boxWidth = 0
  var boxHeight = 0
  var maxPixels: Int
  /// Videos longer than this are refused (seconds).
  var maxSeconds: Double = TranscodeSettings.defaultMaxSeconds
  /// The part kept (seconds from the start; `end` 0: to the end).
  var start = 0.0
  var end = 0.0
  /// The turn the stored frames need to stand upright (``VideoHeader/rotation``).
  var rotation = 0
  /// x264's constant rate factor and preset.
  var crf = 23
  var preset = "veryfast"
  /// `mp4` or `mov`.
  var container = "mp4"
  /// A fragmented MP4 (playable while it is written) rather than one with its index at the end.
  var fragmented = false
  /// x264's threads: a fixed count (an edit's) gives the same bytes on every machine, so a
  /// version can be rendered again to the bytes it had; 0: as many as suit the cores.
  var threads = 0

  /// The longest video transcoded unless the caller says otherwise: two hours.
  static let defaultMaxSeconds = 2.0 * 3600
}

/// What a transcode wrote: its frames' size, how many frames, and how many of them took the
/// grey route (a grey graph's table on the luma plane). `TranscodeOutcome` is a `Sendable`
/// value type.
struct TranscodeOutcome: Sendable, Hashable, Codable {
  var width: Int
  var height: Int
  var frames = 0
  var greyFrames = 0
}

/// A video decoded, its frames put through a ``FilterGraph`` (the same libvips route as a
/// photo's: a preset looks the same on both; a graph that is a table on a grey band, as
/// noir is, runs that table on the luma plane) and encoded as H.264 and AAC, by
/// `dr_video_transcode` (FFmpeg, dlopen'd).
enum VideoTranscode {
  /// Transcodes `bytes`, handing the output's bytes to `write` with the offset each goes at
  /// (false stops the work). `progress` is told the seconds done and in all after each
  /// frame; false stops the work.
  ///
  /// - Throws: A ``DarkroomError`` about `name`: `corrupt` for a damaged video (no frame, or
  ///   frames that stop well before its end); `tooLarge` for frames over `maxPixels` or a
  ///   video longer than `maxSeconds`; `unsupportedFormat` for a file that is not a video
  ///   FFmpeg reads; `invalidArgument` for a trim outside the video; `engine` ("stopped") when
  ///   `progress` stopped it; what the graph's filters throw; `engine` otherwise.
  static func run(
    _ bytes: VideoBytes, name: String, _ settings: TranscodeSettings, graph: FilterGraph?,
    write: @escaping (_ offset: Int, _ bytes: UnsafeRawBufferPointer) -> Bool,
    progress: @escaping (_ done: Double, _ total: Double) -> Bool
  ) throws(DarkroomError) -> TranscodeOutcome {
    let frames = FrameFilter(graph: graph, name: name, write: write, progress: progress)
    var result = DrTranscodeResult()
    var message = [CChar](repeating: 0, count: 512)
    // A grey graph (noir) is a table on the luma of a video coded with BT.709's weights,
    // which are noir's: no frame goes to RGB and back (see `grey_table`).
    let grey = graph?.greyTable(weights: NoirFilter.luma)
    let status = settings.preset.withCString { preset in
      settings.container.withCString { container in
        (grey ?? []).withUnsafeBufferPointer { table in
          var options = DrTranscodeOptions(
            box_width: Int32(clamping: settings.boxWidth),
            box_height: Int32(clamping: settings.boxHeight),
            max_pixels: Int64(settings.maxPixels), max_seconds: settings.maxSeconds,
            start: settings.start, end: settings.end, rotation: Int32(clamping: settings.rotation),
            crf: Int32(clamping: settings.crf), preset: preset, container: container,
            fragmented: settings.fragmented ? 1 : 0, filtered: graph == nil ? 0 : 1,
            threads: Int32(clamping: settings.threads),
            grey_table: grey == nil ? nil : table.baseAddress, grey_matrix: grey == nil ? 0 : 709)
          let context = Unmanaged.passUnretained(frames).toOpaque()
          switch bytes {
          case .file(let file):
            var source = DrVideoSource(fd: file.descriptor, bytes: nil, length: 0)
            return dr_video_transcode(
              &source, FrameFilter.output, &options, FrameFilter.filter, FrameFilter.report,
              context, &result, &message, message.count)
          case .memory(let data):
            return data.withUnsafeBufferPointer { buffer in
              var source = DrVideoSource(fd: -1, bytes: buffer.baseAddress, length: buffer.count)
              return dr_video_transcode(
                &source, FrameFilter.output, &options, FrameFilter.filter, FrameFilter.report,
                context, &result, &message, message.count)
            }
          }
        }
      }
    }
    withExtendedLifetime(frames) {}
    if let error = frames.error { throw error.file == nil ? error.about(name) : error }
    let text = String(decoding: message.prefix { $0 != 0 }.map(UInt8.init), as: UTF8.self)
    guard status == 0 else {
      if frames.stopped {
        throw DarkroomError.stopped(name)
      }
      throw DarkroomError(VideoFrame.kind(of: text), file: name, text)
    }
    return TranscodeOutcome(
      width: Int(result.width), height: Int(result.height), frames: Int(result.frames),
      greyFrames: Int(result.grey_frames))
  }
}

/// The frames' way through the graph, and the progress, for `dr_video_transcode`'s callbacks.
/// Owns the buffer a filtered frame is handed back in (allocated and freed here only).
private final class FrameFilter {
  let graph: FilterGraph?
  let name: String
  let progress: (Double, Double) -> Bool
  let write: (Int, UnsafeRawBufferPointer) -> Bool
  var error: DarkroomError?
  var stopped = false
  private var buffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)

  init(
    graph: FilterGraph?, name: String, write: @escaping (Int, UnsafeRawBufferPointer) -> Bool,
    progress: @escaping (Double, Double) -> Bool
  ) {
    (self.graph, self.name, self.write, self.progress) = (graph, name, write, progress)
  }

  deinit { buffer.deallocate() }

  /// The graph on one upright frame (8-bit RGB, the same size for every frame of a video),
  /// computed into ``buffer``; its size.
  func run(_ pixels: UnsafeRawBufferPointer, width: Int, height: Int) throws(DarkroomError)
    -> (width: Int, height: Int)
  {
    // Over the decoder's frame, not a copy of it: the pixels are read before it changes.
    try VipsImage.over(pixels, width: width, height: height, bands: 3) {
      frame throws(DarkroomError) in
      let image =
        try graph.map { graph throws(DarkroomError) in try graph.apply(to: frame) } ?? frame
      if image.bands != 3 || image.width < 1 || image.height < 1 {
        throw DarkroomError(.engine, file: name, "the filters made \(image.bands) bands of 3")
      }
      let count = image.width * image.height * 3
      if buffer.count < count {
        buffer.deallocate()
        buffer = .allocate(byteCount: count, alignment: 16)
      }
      try image.compute(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
      return (image.width, image.height)
    }
  }

  static let filter: DrFrameFilter = { context, rgb, width, height, out, outWidth, outHeight in
    guard let context else { return 1 }
    let frames = Unmanaged<FrameFilter>.fromOpaque(context).takeUnretainedValue()
    let (w, h) = (Int(width), Int(height))
    do throws(DarkroomError) {
      // With no frame, the size only: a black frame through the graph.
      let black = rgb == nil ? [UInt8](repeating: 0, count: w * h * 3) : []
      let size = try black.withUnsafeBytes { raw in
        Result { () throws(DarkroomError) in
          try frames.run(
            rgb.map { UnsafeRawBufferPointer(start: $0, count: w * h * 3) } ?? raw, width: w,
            height: h)
        }
      }.get()
      outWidth?.pointee = Int32(clamping: size.width)
      outHeight?.pointee = Int32(clamping: size.height)
      out?.pointee = UnsafePointer(frames.buffer.baseAddress?.assumingMemoryBound(to: UInt8.self))
      return 0
    } catch {
      frames.error = error
      return 1
    }
  }

  static let output: DrTranscodeWrite = { context, offset, bytes, count in
    guard let context else { return 1 }
    let frames = Unmanaged<FrameFilter>.fromOpaque(context).takeUnretainedValue()
    if frames.write(Int(offset), UnsafeRawBufferPointer(start: bytes, count: Int(count))) {
      return 0
    }
    frames.stopped = true
    return 1
  }

  static let report: DrTranscodeProgress = { context, done, total in
    guard let context else { return 1 }
    let frames = Unmanaged<FrameFilter>.fromOpaque(context).takeUnretainedValue()
    if frames.progress(done, total) { return 0 }
    frames.stopped = true
    return 1
  }
}

extension Renderer {
  /// `video` transcoded into `output` (a file open for writing) by ``VideoTranscode``: in a
  /// sandboxed worker where videos go to workers (it sends the bytes; this process writes
  /// them), else here; frames over the renderer's ``maxPixels`` are refused.
  func transcode(
    _ video: VideoBytes, name: String, into output: Int32, _ settings: TranscodeSettings,
    graph: FilterGraph?, progress: @escaping (_ done: Double, _ total: Double) -> Bool
  ) throws(DarkroomError) -> TranscodeOutcome {
    var settings = settings
    settings.maxPixels = maxPixels
    if let workers = given ?? Offload.workers(forFormat: "video")?.workers {
      return try workers.transcode(
        video, name: name, into: output, settings, graph: graph, progress: progress, with: self)
    }
    var failure: Int32 = 0
    do {
      return try VideoTranscode.run(
        video, name: name, settings, graph: graph,
        write: { offset, bytes in
          let ok = VideoTranscode.write(bytes, at: offset, to: output)
          if !ok { failure = errno }
          return ok
        }, progress: progress)
    } catch {
      if failure != 0 { throw AtomicFile.writeError(name, failure) }
      throw error
    }
  }
}

extension VideoTranscode {
  /// Writes `bytes` at `offset` of the file `fd`, whole (pwrite, again after a short write).
  static func write(_ bytes: UnsafeRawBufferPointer, at offset: Int, to fd: Int32) -> Bool {
    guard let base = bytes.baseAddress else { return true }
    var done = 0
    while done < bytes.count {
      let n = pwrite(fd, base + done, bytes.count - done, off_t(offset + done))
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { return false }
      done += n
    }
    return true
  }
}

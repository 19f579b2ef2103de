import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// One piece of pixel work sent to a worker process.
struct WorkerJob: Codable, Sendable {
  enum Kind: String, Codable, Sendable {
    /// A representation of a file or of the bytes sent with the job.
    case render
    /// An edit's full-size result, from the original bytes sent with the job.
    case edit
    /// What a file's header says (``AssetMetadata``), from the file or the bytes sent.
    case metadata
    /// A video transcoded (``VideoTranscode``), its frames through a graph: the output's
    /// bytes and progress come in frames before the reply.
    case transcode
    /// Tests: what the sandbox lets a worker do (see `dr_sandbox_probe`).
    case probe
  }

  var kind: Kind
  /// The file, for messages (and the fault switches of tests).
  var name: String
  /// The source is a file handed open after the job (`dr_send_descriptor`); false: the bytes
  /// sent with the job are the source.
  var handsFile = false
  var spec: RenditionSpec?
  /// For `transcode`: what to make, and the graph every frame goes through (nil: none).
  var transcode: TranscodeSettings?
  var graph: FilterGraph?
  var recipe: EditRecipe?
  var maxPixels: Int
  var failOn: FailOn
  /// For `probe`: the folder the worker tries to create a file in.
  var folder: String?
  /// For `probe`: the address of bytes in the parent that the worker tries to read.
  var probeSecret: UInt64?
  /// For `probe`: descriptor numbers the parent holds, which the worker tries to use.
  var probeDescriptors: [Int32]?
}

/// A worker's answer: the encoded bytes follow it, or it carries the error.
struct WorkerReply: Codable, Sendable {
  var error: DarkroomError?
  var width = 0
  var height = 0
  var format: ImageFormat?
  /// For `probe`: what the worker could do (each true is a hole in the sandbox).
  var probe: [String: Bool]?
  /// For `probe`: the descriptors the worker holds (number: what /proc names it), before
  /// the probe's tries.
  var descriptors: [Int32: String]?
  /// For `probe`: those of the parent's numbers that the worker could use.
  var usableDescriptors: [Int32]?
  /// For `metadata`: what the header says.
  var metadata: MetadataWire?
  /// For `transcode`: seconds done and in all, in a frame sent before the reply (the reply
  /// follows once this is nil).
  var progress: [Double]?
  /// For `transcode`: the offset in the output of the bytes this frame carries, in a frame
  /// sent before the reply.
  var writeAt: Int?
  /// For `transcode`: what was written.
  var transcoded: TranscodeOutcome?
}

/// ``AssetMetadata`` as a worker sends it: every field, exactly (its JSON form for people,
/// `darkroom info --json`, leaves out what it can derive).
struct MetadataWire: Codable, Sendable {
  var file: String
  var format: String
  var byteSize, width, height: Int
  var orientationStatus: String
  var orientationRaw: Int?
  var hasAlpha: Bool
  var captureDate: CaptureDate?
  var location: GPSLocation?
  var cameraMake, cameraModel, lensMake, lensModel: String?
  var exposureTime, fNumber: Double?
  var iso: Int?
  var focalLength: Double?
  var iccProfile: ICCProfileInfo?
  var codedColour: CodedColour?
  var damage: DarkroomError?
  var caption: String?
  var rating: Int?
  var keywords: [String]?
  var people: [String]?
  var sources: [String: String]?
  var warnings: [String]?
  var exifThumbnail: FileRange?
  var motionVideo: FileRange?
  var foreignSettings: ForeignSettings?
  var darkroomEdited: Bool?
  var contentIdentifier: String?

  init(_ m: AssetMetadata) {
    (file, format, byteSize, width, height) = (m.file, m.format, m.byteSize, m.width, m.height)
    (orientationStatus, orientationRaw, hasAlpha) = (
      m.orientation.status, m.orientation.raw, m.hasAlpha
    )
    (captureDate, location) = (m.captureDate, m.location)
    (cameraMake, cameraModel, lensMake, lensModel) =
      (m.cameraMake, m.cameraModel, m.lensMake, m.lensModel)
    (exposureTime, fNumber, iso, focalLength) = (m.exposureTime, m.fNumber, m.iso, m.focalLength)
    (iccProfile, codedColour, damage) = (m.iccProfile, m.codedColour, m.damage)
    (caption, rating, keywords, people) = (m.caption, m.rating, m.keywords, m.people)
    (sources, warnings) = (m.sources, m.warnings)
    (exifThumbnail, motionVideo, foreignSettings) = (
      m.exifThumbnail, m.motionVideo, m.foreignSettings
    )
    darkroomEdited = m.darkroomEdited
    contentIdentifier = m.contentIdentifier
  }

  /// The metadata; nil for an orientation that cannot be (a worker that lies).
  var metadata: AssetMetadata? {
    let orientation: OrientationTag
    switch (orientationStatus, orientationRaw) {
    case ("absent", nil): orientation = .absent
    case ("valid", let raw?):
      guard let valid = Orientation(rawValue: raw) else { return nil }
      orientation = .valid(valid)
    case ("invalid", let raw?): orientation = .invalid(raw: raw)
    case ("ignored", let raw?): orientation = .ignored(raw: raw)
    default: return nil
    }
    var m = AssetMetadata(
      file: file, format: format, byteSize: byteSize, width: width, height: height,
      orientation: orientation, hasAlpha: hasAlpha)
    (m.captureDate, m.location) = (captureDate, location)
    (m.cameraMake, m.cameraModel, m.lensMake, m.lensModel) =
      (cameraMake, cameraModel, lensMake, lensModel)
    (m.exposureTime, m.fNumber, m.iso, m.focalLength) = (exposureTime, fNumber, iso, focalLength)
    (m.iccProfile, m.codedColour, m.damage) = (iccProfile, codedColour, damage)
    (m.caption, m.rating, m.keywords) = (caption, rating, keywords ?? [])
    m.people = people ?? []
    (m.sources, m.warnings) = (sources ?? [:], warnings ?? [])
    if let range = exifThumbnail, range.offset >= 0, range.length > 0,
      range.offset + range.length <= byteSize
    {
      m.exifThumbnail = range
    }
    // A range a worker names is kept only if it lies in the file; its bytes are checked when
    // the video is read.
    if let range = motionVideo, range.offset >= 0, range.length >= 16,
      range.offset + range.length <= byteSize
    {
      m.motionVideo = range
    }
    m.foreignSettings = foreignSettings
    m.darkroomEdited = darkroomEdited ?? false
    m.contentIdentifier = contentIdentifier
    return m
  }
}

/// Messages between a parent and its workers, over pipes: a JSON header (4-byte length, little
/// endian) and a binary payload (8-byte length). Nothing here allocates more than a frame says,
/// and a frame's header is bounded, so a confused peer cannot make the other side balloon.
enum Frames {
  static let maxHeader = 1 << 20
  /// The largest payload: a 268-megapixel image, four 16-bit bands, uncompressed, and more.
  static let maxPayload: UInt64 = 4 << 30

  static func write(_ fd: Int32, header: [UInt8], payload: [UInt8]) -> Bool {
    var frame = littleEndian(UInt64(header.count), bytes: 4) + header
    frame += littleEndian(UInt64(payload.count), bytes: 8)
    return writeAll(fd, frame) && writeAll(fd, payload)
  }

  /// The next frame, or nil at the end of the stream (or past `deadline`, with `timedOut`
  /// set) or on a malformed frame.
  static func read(
    _ fd: Int32, deadline: ContinuousClock.Instant? = nil, maxPayload: UInt64 = Frames.maxPayload,
    timedOut: inout Bool
  ) -> (header: [UInt8], payload: [UInt8])? {
    guard let size = readExactly(fd, 4, deadline, &timedOut).map(number), size <= maxHeader,
      let header = readExactly(fd, Int(size), deadline, &timedOut),
      let length = readExactly(fd, 8, deadline, &timedOut).map(number),
      length <= min(maxPayload, Frames.maxPayload),
      let payload = readExactly(fd, Int(length), deadline, &timedOut)
    else { return nil }
    return (header, payload)
  }

  private static func littleEndian(_ value: UInt64, bytes: Int) -> [UInt8] {
    (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
  }

  private static func number(_ bytes: [UInt8]) -> UInt64 {
    bytes.enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
  }

  private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { AtomicFile.writeAll(fd, $0) }
  }

  /// Reads `count` bytes. The buffer grows as bytes arrive (1 MiB at a time), so a peer that
  /// announces more than it sends cannot make this side allocate what it announced.
  private static func readExactly(
    _ fd: Int32, _ count: Int, _ deadline: ContinuousClock.Instant?, _ timedOut: inout Bool
  ) -> [UInt8]? {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(min(count, 64 << 20))  // a photo's size at once, a liar's not
    var chunk = [UInt8](repeating: 0, count: min(count, 1 << 20))
    while bytes.count < count {
      if let deadline {
        let left = ContinuousClock.now.duration(to: deadline)
        let milliseconds =
          left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
        guard milliseconds > 0 else {
          timedOut = true
          return nil
        }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, Int32(clamping: milliseconds))
        if ready < 0 && errno == EINTR { continue }
        if ready == 0 { continue }  // the loop re-checks the deadline
      }
      let wanted = min(chunk.count, count - bytes.count)
      let n = chunk.withUnsafeMutableBytes { raw -> Int in
        guard let base = raw.baseAddress else { return 0 }
        return Glibc.read(fd, base, wanted)
      }
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { return nil }
      bytes += chunk[0..<n]
    }
    return bytes
  }
}

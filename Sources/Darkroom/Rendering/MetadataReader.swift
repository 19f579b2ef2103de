extension AssetMetadata {
  /// Reads a file's metadata from its header, without decoding pixels.
  ///
  /// Throws a `DarkroomError` naming the file for a missing, unreadable, empty, truncated or
  /// unrecognised file. A file with no EXIF is normal: its EXIF fields are nil.
  ///
  /// ```swift
  /// let metadata = try AssetMetadata.read(path: "IMG_0001.jpg")
  /// print(metadata.format, metadata.width, metadata.height, metadata.cameraModel ?? "-")
  /// ```
  ///
  /// Only the header is read, so this is cheap even for a large file, and it may be called
  /// from any thread or task.
  ///
  /// - Throws: A ``DarkroomError`` about `path`: `notFound`, `isDirectory`, `unreadable` or
  ///   `empty` for a file that cannot be opened; `truncated` or `corrupt` for a damaged JPEG
  ///   or PNG header; `unsupportedFormat` for a file that is no image Darkroom reads, or in
  ///   a format ``TrustedFormats`` does not let through; `engine` when libvips cannot read
  ///   another format's header; `io` for a failed read.
  package static func read(path: String) throws(DarkroomError) -> AssetMetadata {
    try read(.file(path))
  }

  /// Reads the metadata of a file or of bytes in memory.
  ///
  /// ```swift
  /// let metadata = try AssetMetadata.read(.data(uploadedBytes, name: "upload.jpg"))
  /// ```
  ///
  /// ``AssetMetadata/file`` is the source's ``ImageSource/name``.
  ///
  /// - Throws: A ``DarkroomError`` naming the source, as ``read(path:)`` does; `empty` for
  ///   no bytes.
  package static func read(_ source: ImageSource) throws(DarkroomError) -> AssetMetadata {
    var metadata = try readUnplaced(source)
    metadata.locate()
    return metadata
  }

  /// Reads as ``read(_:)`` does, but leaves out the place and time zone: for a worker, and
  /// for a scan, which reads sidecars of its own first.
  static func readUnplaced(_ source: ImageSource) throws(DarkroomError) -> AssetMetadata {
    // Bytes in scope of ``Containment`` (``Offload``) are parsed in a worker, never by this process: a
    // file is handed to it open (once opened here), bytes are sent.
    let name = source.name
    do {
      switch source {
      case .file(let path):
        let file = try InputFile(path)
        let head = try file.read(at: 0, count: min(32, file.size))[...]
        var metadata: AssetMetadata
        if let (workers, limit) = Offload.workers(forFormat: TrustedFormats.sniff(head, name: path))
        {
          metadata = try workers.metadata(handing: file, name: name, limit: limit)
        } else {
          metadata = try read(ByteSource(file: file), name) {
            try Vips.attributingErrors(file: path) { () throws(DarkroomError) in
              try VipsImage.header(path: path)
            }
          }
        }
        // Sidecars are read here, by this process, with Darkroom's own XML reader.
        metadata.applySidecars(of: path)
        return metadata
      case .data(let bytes, _):
        if let (workers, limit) = Offload.workers(
          forFormat: TrustedFormats.sniff(bytes.prefix(32), name: name))
        {
          return try workers.metadata(source, limit: limit)
        }
        guard !bytes.isEmpty else {
          throw DarkroomError(.empty, file: name, "empty input (0 bytes)")
        }
        // libvips reads the bytes in place; its header image is gone when `read` returns.
        return try PinnedBytes.borrowing(bytes) { pinned throws(DarkroomError) in
          do {
            return try read(ByteSource(memory: bytes), name) {
              try Vips.attributingErrors(file: name) { () throws(DarkroomError) in
                try VipsImage.header(buffer: pinned, name: name)
              }
            }
          } catch let error as DarkroomError {
            throw error
          } catch {
            throw DarkroomError(.io, file: name, "cannot read: \(error)")
          }
        }
      }
    } catch let error as DarkroomError {
      throw error.file == nil ? error.about(name) : error
    } catch {
      throw DarkroomError(.io, file: name, "cannot read: \(error)")
    }
  }

  /// Reads the metadata of a file handed open (a worker's): JPEG and PNG headers through
  /// the descriptor, reading only what they need; other formats from the whole file, as
  /// ``read(_:)`` reads bytes.
  static func read(handed file: InputFile, name: String) throws(DarkroomError) -> AssetMetadata {
    do {
      if let header = try ContainerHeader.parse(ByteSource(file: file)), !header.hasCompressedICC {
        return make(name, file.size, header)
      }
    } catch let error as DarkroomError {
      throw error.file == nil ? error.about(name) : error
    } catch {
      throw DarkroomError(.io, file: name, "cannot read: \(error)")
    }
    return try readUnplaced(.data(file.read(at: 0, count: file.size), name: name))
  }

  private static func read(
    _ source: ByteSource, _ name: String, libvipsHeader: () throws -> VipsImage
  ) throws -> AssetMetadata {
    // A format refused by name (`--deny-format jpeg`) is refused before its header is read.
    if !TrustedFormats.denied.isEmpty {
      try TrustedFormats.check(try source.bytes(0, min(32, source.count)) ?? [], file: name)
    }
    if var header = try ContainerHeader.parse(source) {
      // PNG compresses its profile; libvips' header load inflates it.
      if header.hasCompressedICC {
        header.icc = (try? libvipsHeader())?.blob(named: "icc-profile-data")
      }
      return make(name, source.count, header)
    }
    // Only formats Darkroom trusts (or was told to allow) reach libvips' loaders.
    let head = try source.bytes(0, min(32, source.count)) ?? []
    try TrustedFormats.check(head, file: name)
    let format = TrustedFormats.sniff(head, name: name)
    if format == "raw" {
      guard let bytes = try source.bytes(0, source.count) else {
        throw DarkroomError(.truncated, file: name, "the file ends before its size says")
      }
      return try rawMetadata(Array(bytes), name)
    }
    try Vips.prepareLoader(for: format)
    TestFaults.current.apply(to: name)  // tests: a loader that hangs or crashes in a header
    let image = try libvipsHeader()
    // An unrecognised first few bytes pass the check above while a format is allowed: the
    // loader libvips chose must be permitted too.
    guard TrustedFormats.permits(image.formatName) else {
      throw TrustedFormats.refusal(image.formatName, file: name)
    }
    var metadata = fromVips(image, name, source.count)
    // libvips ignores a HEIF's nclx box; the renderer converts what it says.
    if ["heif", "avif"].contains(metadata.format) {
      metadata.codedColour = try? CodedColour.read(source)
    }
    return metadata
  }

  private static func fromVips(_ image: VipsImage, _ path: String, _ size: Int) -> AssetMetadata {
    let header = ContainerHeader(
      format: image.formatName, width: image.width, height: image.height,
      hasAlpha: image.hasAlpha, exif: image.blob(named: "exif-data"),
      icc: image.blob(named: "icc-profile-data"),
      xmp: image.blob(named: "xmp-data") ?? heifXMP(image),
      iptc: image.blob(named: "iptc-data"))
    var metadata = make(path, size, header)
    // TIFF keeps its Orientation as a tag of its own, outside any EXIF block; libvips
    // reads it (and leaves it out for HEIF, whose container orients the pixels).
    if metadata.orientation == .absent, header.format == "tiff",
      let raw = image.integer(named: "orientation")
    {
      metadata.orientation =
        Orientation(rawValue: raw).map(OrientationTag.valid) ?? .invalid(raw: raw)
    }
    return metadata
  }

  /// How much of a TIFF RAW is read as its EXIF block: cameras and Adobe's converter write
  /// the directories and their values before the image data, and copying and parsing the
  /// whole of a 50 MB RAW cost 43 ms a header. A tag whose value lies past it is left out
  /// (LibRaw's reading fills the camera, exposure and date).
  static let rawTagsLimit = 4 << 20

  /// A camera RAW's metadata: LibRaw's header (size, orientation, camera, lens, exposure,
  /// date), for a RAW that is a TIFF (DNG, CR2, NEF, ARW, ...) its EXIF tags, read as any
  /// EXIF block is (a date with its offset, GPS, caption), and its own XMP packet (captions,
  /// ratings, Lightroom's settings in a DNG); LibRaw's values fill what the tags leave out,
  /// and its orientation is the one it develops by.
  private static func rawMetadata(_ bytes: [UInt8], _ name: String) throws(DarkroomError)
    -> AssetMetadata
  {
    let raw = try RawFile(bytes: bytes, name: name).header()
    let tiff =
      bytes.starts(with: [0x49, 0x49, 0x2A, 0x00]) || bytes.starts(with: [0x4D, 0x4D, 0x00, 0x2A])
    var metadata = make(
      name, bytes.count,
      ContainerHeader(
        format: "raw", width: raw.width, height: raw.height, hasAlpha: false,
        exif: tiff ? Array(bytes.prefix(Self.rawTagsLimit)) : nil, icc: nil, xmp: raw.xmp,
        iptc: nil))
    metadata.orientation = .valid(raw.orientation)
    metadata.cameraMake = metadata.cameraMake ?? raw.make
    metadata.cameraModel = metadata.cameraModel ?? raw.model
    metadata.lensMake = metadata.lensMake ?? raw.lensMake
    metadata.lensModel = metadata.lensModel ?? raw.lens
    metadata.iso = metadata.iso ?? raw.iso
    metadata.exposureTime = metadata.exposureTime ?? raw.exposureTime
    metadata.fNumber = metadata.fNumber ?? raw.fNumber
    metadata.focalLength = metadata.focalLength ?? raw.focalLength
    if metadata.captureDate == nil, let date = raw.date {
      metadata.captureDate = date
      metadata.sources["captureDate"] = "RAW"
    }
    return metadata
  }

  /// A HEIF's or AVIF's XMP packet: libvips 8.14 keeps a `mime` item as `heif-mime-N` (N
  /// its place among the file's metadata items), not as `xmp-data`, so the packet is the
  /// first of those that is XMP.
  private static func heifXMP(_ image: VipsImage) -> [UInt8]? {
    guard ["heif", "avif"].contains(image.formatName) else { return nil }
    let starts = ["<?xpacket", "<x:xmpmeta"].map { Array($0.utf8) }
    for index in 0..<8 {
      guard let blob = image.blob(named: "heif-mime-\(index)") else { continue }
      let text = blob.drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
      if starts.contains(where: { text.starts(with: $0) }) { return blob }
    }
    return nil
  }

  private static func make(_ path: String, _ size: Int, _ header: ContainerHeader)
    -> AssetMetadata
  {
    var metadata = AssetMetadata(
      file: path, format: header.format, byteSize: size, width: header.width,
      height: header.height, orientation: .absent, hasAlpha: header.hasAlpha)
    if let icc = header.icc {
      metadata.iccProfile = ICCProfileInfo(profile: icc)
    }
    metadata.damage = header.damage?.about(path)
    if let block = header.exif, let exif = ExifDocument(block: block) {
      metadata.apply(exif)
      metadata.contentIdentifier = AppleMakerNote.contentIdentifier(exif: block)
      // A JPEG's embedded thumbnail, placed in the file: the APP1 payload's start plus its
      // place in the payload.
      if header.format == "jpeg", let start = header.exifStart, let at = exif.thumbnailOffset,
        (1...65_536).contains(exif.thumbnailByteCount), at + exif.thumbnailByteCount <= block.count
      {
        metadata.exifThumbnail = FileRange(offset: start + at, length: exif.thumbnailByteCount)
      }
    }
    // The dates in the order of docs/info-json.md: EXIF's (read above), embedded XMP's,
    // IPTC's, then the GPS clock's (UTC).
    let iptc = header.iptc.map(IPTCRecords.init)
    if let iptc { metadata.apply(iptc) }
    if let xmp = header.xmp, let packet = metadata.applyXMP(xmp, from: "XMP", dates: .ifMissing) {
      metadata.motionVideo = MotionPhoto.embeddedRange(packet, fileSize: size)
    }
    if metadata.motionVideo == nil { metadata.motionVideo = header.trailerVideo }
    for (date, source) in [(iptc?.captureDate, "IPTC"), (metadata.gpsDate, "GPS")] {
      guard metadata.captureDate == nil, let date else { continue }
      metadata.captureDate = date
      metadata.sources["captureDate"] = source
    }
    // libheif turns HEIF and AVIF pixels upright while decoding; the size libvips reports is
    // already the upright one.
    if ["heif", "avif"].contains(header.format), let raw = metadata.orientation.raw {
      metadata.orientation = .ignored(raw: raw)
    }
    return metadata
  }

  /// What cameras write as ImageDescription when nobody wrote one.
  static let cameraPlaceholders: Set<String> = [
    "OLYMPUS DIGITAL CAMERA", "SONY DSC", "DIGITAL CAMERA", "DCIM", "SAMSUNG", "KODAK CSC",
    "DEFAULT", "<KENOX S630  / SAMSUNG S630>",
  ]

  private mutating func apply(_ exif: ExifDocument) {
    func text(_ tag: UInt16, _ directory: ExifDirectory) -> String? {
      guard case .text(let value) = exif.value(tag, in: directory), !value.isEmpty else {
        return nil
      }
      return value
    }
    func integer(_ tag: UInt16, _ directory: ExifDirectory) -> Int? {
      guard case .integers(let values) = exif.value(tag, in: directory) else { return nil }
      return values.first
    }
    func rationals(_ tag: UInt16, _ directory: ExifDirectory) -> [Double]? {
      guard case .rationals(let values) = exif.value(tag, in: directory) else { return nil }
      let known = values.compactMap { $0 }
      return known.count == values.count && !known.isEmpty ? known : nil
    }

    switch exif.value(0x0112, in: .primary) {
    case nil: orientation = .absent
    case .integers(let values)?:
      let raw = values.first ?? 0
      orientation = Orientation(rawValue: raw).map(OrientationTag.valid) ?? .invalid(raw: raw)
    case _?: orientation = .invalid(raw: 0)
    }

    cameraMake = text(0x010F, .primary)
    cameraModel = text(0x0110, .primary)
    lensMake = text(0xA433, .exif)
    lensModel = text(0xA434, .exif)
    exposureTime = rationals(0x829A, .exif)?.first
    fNumber = rationals(0x829D, .exif)?.first
    iso = integer(0x8827, .exif)
    focalLength = rationals(0x920A, .exif)?.first
    // DateTimeOriginal (with SubSecTimeOriginal and OffsetTimeOriginal), else CreateDate
    // (DateTimeDigitized, with its own).
    for (tag, subsecond, offset) in [(0x9003, 0x9291, 0x9011), (0x9004, 0x9292, 0x9012)]
    where captureDate == nil {
      guard let written = text(UInt16(tag), .exif) else { continue }
      captureDate = CaptureDate(
        exif: written, subsecond: text(UInt16(subsecond), .exif),
        offset: text(UInt16(offset), .exif))
      if captureDate != nil { sources["captureDate"] = tag == 0x9003 ? "EXIF" : "EXIF CreateDate" }
    }
    // GPSDateStamp and GPSTimeStamp: the satellites' clock, in UTC.
    if let day = text(0x001D, .gps), let time = rationals(0x0007, .gps), time.count == 3,
      time.allSatisfy({ $0 >= 0 && $0 < 61 })
    {
      let seconds = time[2]
      let whole = Int(seconds)
      let milliseconds = min(999, Int(((seconds - Double(whole)) * 1000).rounded()))
      gpsDate = CaptureDate(
        exif: "\(day) \(Int(time[0])):\(Int(time[1])):\(whole)",
        subsecond: milliseconds > 0 ? String(String(1000 + milliseconds).dropFirst()) : nil,
        offset: "+00:00")
    }
    // Cameras fill ImageDescription with blanks or their name ("OLYMPUS DIGITAL CAMERA").
    if let description = text(0x010E, .primary)?.trimmingCharacters(in: .whitespaces),
      !description.isEmpty, !Self.cameraPlaceholders.contains(description.uppercased())
    {
      caption = description
      sources["caption"] = "EXIF"
    }

    // Windows' Rating and XPKeywords, below IPTC's and XMP's (read after this).
    if let stars = integer(0x4746, .primary), (-1...5).contains(stars) {
      rating = stars
      sources["rating"] = "EXIF"
    }
    if case .bytes(let raw)? = exif.value(0x9C9E, in: .primary), raw.count >= 2 {
      let units = stride(from: 0, to: raw.count - 1, by: 2).map {
        UInt16(raw[$0]) | UInt16(raw[$0 + 1]) << 8
      }
      let text = String(decoding: units.prefix { $0 != 0 }, as: UTF16.self)
      let words = text.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        .filter { !$0.isEmpty }
      if !words.isEmpty {
        keywords = words
        sources["keywords"] = "EXIF"
      }
    }

    func degrees(_ tag: UInt16, ref: UInt16, negative: String) -> Double? {
      guard let parts = rationals(tag, .gps), parts.count == 3 else { return nil }
      // Rounded to 1e-7 degrees (about 1 cm): rationals carry no more than that.
      let value = ((parts[0] + parts[1] / 60 + parts[2] / 3600) * 1e7).rounded() / 1e7
      return text(ref, .gps)?.uppercased() == negative ? -value : value
    }
    if let latitude = degrees(0x0002, ref: 0x0001, negative: "S"),
      let longitude = degrees(0x0004, ref: 0x0003, negative: "W"),
      abs(latitude) <= 90, abs(longitude) <= 180
    {
      var altitude = rationals(0x0006, .gps)?.first
      if case .bytes(let ref)? = exif.value(0x0005, in: .gps), ref.first == 1 {
        altitude = altitude.map { -$0 }
      }
      location = GPSLocation(latitude: latitude, longitude: longitude, altitude: altitude)
    }
  }
}

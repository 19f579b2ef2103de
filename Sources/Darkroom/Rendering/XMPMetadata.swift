import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// XMP, embedded and in sidecars, as ``AssetMetadata`` reads it. The priority, field by
/// field (docs/metadata.md): the sidecar `NAME.EXT.xmp` (darktable's name), then `NAME.xmp`
/// (Lightroom's), then the file's embedded XMP and EXIF. A packet or a value that cannot be
/// read is a warning, and the rest is read as usual.
extension AssetMetadata {
  /// How an XMP packet's date is taken.
  enum XMPDates {
    /// Over any date read so far (a sidecar: what the user set beside the file).
    case override
    /// Only when the file's EXIF gave none (its embedded XMP usually repeats EXIF).
    case ifMissing
  }

  /// Reads `bytes` as an XMP packet from `source` and takes what it says.
  /// `file`: the photo a sidecar is beside, whose Camera Raw settings it may not hold
  /// (``ForeignSettings/belong(to:sidecar:)``).
  @discardableResult
  mutating func applyXMP(
    _ bytes: [UInt8], from source: String, dates: XMPDates, file: String? = nil
  ) -> XMPPacket? {
    let packet: XMPPacket
    do {
      packet = try XMPPacket(bytes)
    } catch {
      warnings.append("\(source): not read (\(error.description))")
      return nil
    }
    if dates == .ifMissing, packet.has(XMPPacket.darkroom, "AdjustmentData") {
      darkroomEdited = true
    }
    // Lightroom's settings: a sidecar's (read after the file's own) win.
    if let settings = ForeignSettings.read(packet, source: source),
      file.map({ settings.belong(to: $0, sidecar: source) }) ?? true
    {
      foreignSettings = settings
      sources["foreignEdit"] = source
    }
    // The camera, when EXIF did not say (a RAW's edit carries it in XMP only).
    if cameraMake == nil, cameraModel == nil {
      cameraMake = packet.text(XMPPacket.tiff, "Make")
      cameraModel = packet.text(XMPPacket.tiff, "Model")
    }
    if let caption = packet.text(XMPPacket.dc, "description"), !caption.isEmpty {
      self.caption = caption
      sources["caption"] = source
    }
    if let text = packet.text(XMPPacket.xmp, "Rating") {
      if let value = Double(text), value == value.rounded(), (-1...5).contains(value) {
        rating = Int(value)
        sources["rating"] = source
      } else {
        warnings.append("\(source): rating \(text.prefix(16)) is not -1 to 5; ignored")
      }
    }
    var keywords = packet.list(XMPPacket.dc, "subject").filter { !$0.isEmpty }
    for path in packet.list(XMPPacket.lightroom, "hierarchicalSubject") {
      if let leaf = path.split(separator: "|").last.map(String.init), !keywords.contains(leaf) {
        keywords.append(leaf)
      }
    }
    // A sidecar's empty `dc:subject` says "no keywords" (as `darkroom meta` writes when all
    // are taken off), over what the photo says; an empty one inside the photo says nothing.
    if !keywords.isEmpty || (dates == .override && packet.has(XMPPacket.dc, "subject")) {
      self.keywords = keywords
      sources["keywords"] = source
    }
    // People: the names of MWG regions (a face's, mostly) and of Microsoft's people tags.
    var people: [String] = []
    for name in packet.list(XMPPacket.mwgRegions, "Name")
      + packet.list(XMPPacket.microsoftRegion, "PersonDisplayName")
    where !name.isEmpty && !people.contains(name) {
      people.append(name)
    }
    if !people.isEmpty {
      self.people = people
      sources["people"] = source
    }
    guard dates == .override || captureDate == nil else { return packet }
    // As exiftool-based tools read them: the original's date, then Photoshop's and the
    // XMP's own creation date, each above the embedded EXIF for a sidecar.
    for (namespace, name) in [
      (XMPPacket.exif, "DateTimeOriginal"), (XMPPacket.photoshop, "DateCreated"),
      (XMPPacket.xmp, "CreateDate"),
    ] {
      guard let text = packet.text(namespace, name) else { continue }
      if let date = CaptureDate(iso8601: text) {
        captureDate = date
        sources["captureDate"] = source
        return packet
      }
      warnings.append("\(source): date \(text.prefix(40)) is not a date Darkroom reads; ignored")
    }
    return packet
  }

  /// Takes what the sidecars beside the file at `path` say over what the file says:
  /// `NAME.xmp`, then `NAME.EXT.xmp` (which wins where both say something).
  mutating func applySidecars(of path: String) {
    let path = OpenedFiles.name(of: path)  // beside the file, not beside /proc/self/fd
    // A Live Photo's video is a neighbour too, found the same way.
    liveVideo = MotionPhoto.pairedCompanion(of: path, identifier: contentIdentifier).map {
      FilePath($0).name
    }
    for (name, bytes) in Self.sidecarPackets(of: path, warnings: &warnings) {
      applyXMP(bytes, from: name, dates: .override, file: path)
    }
  }

  /// The bytes of each sidecar beside the file at `path`, by name, the one that loses
  /// first; one that cannot be read (or is too large) is a line in `warnings`.
  static func sidecarPackets(of path: String, warnings: inout [String]) -> [(
    name: String, bytes: [UInt8]
  )] {
    var packets: [(name: String, bytes: [UInt8])] = []
    for sidecar in sidecars(of: path).reversed() {
      let name = FilePath(sidecar).name
      do {
        packets.append((name, try readSidecar(sidecar)))
      } catch {
        warnings.append("\(name): not read (\(error.message))")
      }
    }
    return packets
  }

  /// A sidecar's bytes, read through one descriptor opened without following a link: a
  /// plain file of its own (one link) of at most ``XMPPacket/maxBytes``, or an error that
  /// says why not. A sidecar that is a link (to a private file elsewhere, say) is never read
  /// through it.
  static func readSidecar(_ path: String) throws(DarkroomError) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else {
      let reason = errno == ELOOP ? "a link: sidecars are read as plain files only" : nil
      throw DarkroomError(.unreadable, file: path, reason ?? String(cString: strerror(errno)))
    }
    let file = try InputFile(descriptor: fd, path: path)
    var info = stat()
    guard fstat(file.descriptor, &info) == 0, info.st_nlink == 1 else {
      throw DarkroomError(
        .unreadable, file: path,
        "it has \(info.st_nlink) hard links: sidecars are read as files of their own only")
    }
    guard file.size <= XMPPacket.maxBytes else {
      throw DarkroomError(
        .tooLarge, file: path, "larger than \(XMPPacket.maxBytes >> 20) MiB")
    }
    return try file.read(at: 0, count: file.size)
  }

  /// The sidecars of the file at `path` that are there (links included, which
  /// ``readSidecar(_:)`` then refuses), the one that wins first: `NAME.EXT.xmp`, then
  /// `NAME.xmp` (as darktable and Lightroom write them, in lower case).
  static func sidecars(of path: String) -> [String] {
    // `IMG_0001.jpg` → `IMG_0001`; a name without an extension has no NAME.xmp of its own.
    guard let (stem, _) = FilePath(path).splitExtension else { return [] }
    var found: [String] = []
    for candidate in [path + ".xmp", stem + ".xmp"] {
      var status = stat()
      if lstat(candidate, &status) == 0, status.st_mode & S_IFMT != S_IFDIR {
        found.append(candidate)
      }
    }
    return found
  }
}

extension CaptureDate {
  /// Parses XMP's dates: `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, and with a time
  /// `YYYY-MM-DDThh:mm[:ss[.s]][Z|+hh:mm]`; nil for anything else and for years outside
  /// 1 to 9999.
  init?(iso8601 text: String) {
    let match = text.wholeMatch(
      of:
        /(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:\d{2})?)?)?)?/
    )
    guard let match, let year = Int(match.1), (1...9999).contains(year) else { return nil }
    let number = { (part: Substring?, fallback: Int) in part.flatMap { Int($0) } ?? fallback }
    (self.year, month, day) = (year, number(match.2, 1), number(match.3, 1))
    (hour, minute, second) = (number(match.4, 0), number(match.5, 0), number(match.6, 0))
    guard (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour),
      (0...59).contains(minute), (0...60).contains(second)
    else { return nil }
    subsecond = match.7.map(String.init)
    switch match.8 {
    case nil: utcOffsetMinutes = nil
    case "Z"?: utcOffsetMinutes = 0
    case let offset?:
      let sign = offset.first == "-" ? -1 : 1
      let hours = Int(offset.dropFirst().prefix(2)) ?? 0
      let minutes = Int(offset.suffix(2)) ?? 0
      guard hours <= 14, minutes < 60 else { return nil }
      utcOffsetMinutes = sign * (hours * 60 + minutes)
    }
  }
}

/// The JSON form of metadata, as `darkroom info --json` prints it. Field names are stable;
/// every field is always present, `null` when the file does not say. See docs/info-json.md.
extension AssetMetadata: Encodable {
  private enum Field: String, CodingKey {
    case file, format, byteSize, width, height, displayWidth, displayHeight
    case orientation, orientationStatus, orientationRaw, hasAlpha
    case captureDate, localDateTime, captureInstant, timeZone, place, gps, cameraMake, cameraModel,
      lensMake, lensModel
    case exposureTime, fNumber, iso, focalLength, iccProfile, codedColour, damage, damageMessage
    case caption, rating, keywords, people, sources, warnings, exifThumbnail, motionVideo,
      liveVideo, foreignEdit
  }

  /// Encodes the metadata as `darkroom info --json` prints it: every field present, `null`
  /// when the file does not say.
  ///
  /// - Throws: Whatever `encoder` throws.
  package func encode(to encoder: Encoder) throws {
    var c = encoder.container(keyedBy: Field.self)
    try c.encode(file, forKey: .file)
    try c.encode(format, forKey: .format)
    try c.encode(byteSize, forKey: .byteSize)
    try c.encode(width, forKey: .width)
    try c.encode(height, forKey: .height)
    try c.encode(displayWidth, forKey: .displayWidth)
    try c.encode(displayHeight, forKey: .displayHeight)
    try c.encode(orientation.effective.rawValue, forKey: .orientation)
    try c.encode(orientation.status, forKey: .orientationStatus)
    try c.encode(orientation.raw, forKey: .orientationRaw)
    try c.encode(hasAlpha, forKey: .hasAlpha)
    try c.encode(captureDate?.iso8601, forKey: .captureDate)
    try c.encode(captureDate?.localDateTime, forKey: .localDateTime)
    try c.encode(captureDate?.instant, forKey: .captureInstant)
    try c.encode(timeZone, forKey: .timeZone)
    try c.encode(place, forKey: .place)
    try c.encode(location, forKey: .gps)
    try c.encode(cameraMake, forKey: .cameraMake)
    try c.encode(cameraModel, forKey: .cameraModel)
    try c.encode(lensMake, forKey: .lensMake)
    try c.encode(lensModel, forKey: .lensModel)
    try c.encode(exposureTime, forKey: .exposureTime)
    try c.encode(fNumber, forKey: .fNumber)
    try c.encode(iso, forKey: .iso)
    try c.encode(focalLength, forKey: .focalLength)
    try c.encode(iccProfile, forKey: .iccProfile)
    try c.encode(codedColour?.printed, forKey: .codedColour)
    try c.encode(damage?.kind.rawValue, forKey: .damage)
    try c.encode(damage?.message, forKey: .damageMessage)
    try c.encode(caption, forKey: .caption)
    try c.encode(rating, forKey: .rating)
    try c.encode(keywords, forKey: .keywords)
    try c.encode(people, forKey: .people)
    try c.encode(sources, forKey: .sources)
    try c.encode(warnings, forKey: .warnings)
    try c.encode(exifThumbnail, forKey: .exifThumbnail)
    try c.encode(motionVideo, forKey: .motionVideo)
    try c.encode(liveVideo, forKey: .liveVideo)
    try c.encode(foreignEdit?.printed, forKey: .foreignEdit)
  }
}

/// Where and in which time zone a photo was taken, from its GPS position and the offline
/// ``GeoData``: the nearest place, the IANA zone, and a capture time placed in UTC when the
/// camera wrote no offset.
extension AssetMetadata {
  /// Fills ``place`` and ``timeZone`` from the GPS position, and, where the capture date
  /// has no offset, the zone's offset at that local time (`sources.utcOffset` = `GPS time
  /// zone`). A date from the GPS clock (UTC) is turned into the zone's local time. Without a
  /// position or the data, nothing changes (the date stays the local clock's, flagged by its
  /// missing offset).
  mutating func locate(with geo: GeoData? = GeoData.shared) {
    guard let location, let geo else { return }
    place = geo.places?.nearest(latitude: location.latitude, longitude: location.longitude)
    guard let zone = geo.zones?.zone(latitude: location.latitude, longitude: location.longitude)
    else { return }
    timeZone = zone
    sources["timeZone"] = "GPS"
    guard var date = captureDate, let rules = ZoneRules.named(zone) else { return }
    if sources["captureDate"] == "GPS", date.utcOffsetMinutes == 0 {
      // The satellites' clock: the same instant, on the local clock.
      let instant = Int64(date.secondsSince1970.rounded(.down))
      captureDate = CaptureDate(
        instant: instant, offsetSeconds: rules.offset(at: instant), of: date)
      sources["utcOffset"] = "GPS time zone"
    } else if date.utcOffsetMinutes == nil {
      let local = Int64(date.secondsSince1970.rounded(.down))
      date.utcOffsetMinutes = rules.offset(forLocal: local) / 60
      captureDate = date
      sources["utcOffset"] = "GPS time zone"
    }
  }
}

extension CaptureDate {
  /// The local clock time at `instant` (seconds since 1970) with `offsetSeconds`, keeping
  /// `date`'s subsecond.
  init(instant: Int64, offsetSeconds: Int, of date: CaptureDate) {
    let local = instant + Int64(offsetSeconds)
    let days = Int(local >= 0 ? local / 86_400 : (local - 86_399) / 86_400)
    let seconds = Int(local - Int64(days) * 86_400)
    (year, month, day) = Self.civil(days: days)
    (hour, minute, second) = (seconds / 3600, seconds / 60 % 60, seconds % 60)
    subsecond = date.subsecond
    utcOffsetMinutes = offsetSeconds / 60
  }

  /// The clock time without an offset: `2024-05-01T14:03:09.120`.
  package var localDateTime: String {
    var copy = self
    copy.utcOffsetMinutes = nil
    return copy.iso8601
  }

  /// The instant in UTC, `2024-05-01T12:03:09.120Z`; nil when the offset is not known.
  package var instant: String? {
    guard utcOffsetMinutes != nil else { return nil }
    var utc = CaptureDate(
      instant: Int64(secondsSince1970.rounded(.down)), offsetSeconds: 0, of: self)
    utc.utcOffsetMinutes = nil
    return utc.iso8601 + "Z"
  }
}

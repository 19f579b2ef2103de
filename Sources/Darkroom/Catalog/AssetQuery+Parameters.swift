import FoundationEssentials

extension AssetQuery {
  /// The names ``init(parameters:)`` takes: `darkroom list`'s options and the server's query
  /// parameters are the same words.
  public static let parameterNames = [
    "album", "type", "from", "to", "camera", "edited", "favourite", "damaged", "near",
    "min-duration",
    "max-duration", "sort", "after", "rating", "keyword", "text", "place", "month", "day",
  ]

  /// A query from named text values, as a command line or a URL gives them:
  /// `album` (a title, `folder:PATH`, `smart:NAME`), `type` (photo, video), `from` and `to`
  /// (`YYYY-MM-DD`, the whole day for `to`, or an ISO 8601 time), `camera`, `edited`,
  /// `favourite` and `damaged` (true, false), `near` (`LAT,LON,KM`), `min-duration` and `max-duration`
  /// (seconds), `sort` (date, -date, name, size, album), `after` (an asset id: the next
  /// page), `month` (`YYYY-MM`: taken in that month, on the clock where it was taken;
  /// `0000-00` for dates no month holds), `day` (`MM-DD`: taken on that day of any year, on
  /// the clock where it was taken), `rating` (`4`, `>=4`, `<=2`, `3-5`; -1 is rejected, 0 none), `keyword` (one
  /// keyword, whole), `place` (a place, region or country, whole) and `text` (in the name,
  /// caption, keywords, camera or place). Names it does not
  /// know are left to the caller.
  ///
  /// ```swift
  /// let query = try AssetQuery(parameters: [("album", "smart:favourites"), ("sort", "-date")])
  /// ```
  ///
  /// A user album sorts by its own order unless `sort` says otherwise; `smart:trash` lists
  /// the trash; a duration bound without a type means videos.
  ///
  /// - Throws: `invalidArgument` whose message starts with the parameter's name and says
  ///   what it takes, for a value it cannot read.
  public init(parameters: [(name: String, value: String)]) throws(DarkroomError) {
    self.init()
    var sort: Sort?
    for (name, value) in parameters {
      // No value a person types is this long; a longer one is a mistake or an attack (a
      // LIKE pattern of 50,000 characters is more than SQLite will match).
      guard value.utf8.count <= Self.longestValue else {
        throw DarkroomError(
          .invalidArgument,
          "\(name) takes at most \(Self.longestValue) bytes; not \(value.utf8.count)")
      }
      switch name {
      case "album": album = AlbumRef(value)
      case "type":
        guard let type = MediaType(rawValue: value) else {
          throw Self.invalid(name, "photo or video", value)
        }
        mediaType = type
      case "from": from = try Self.date(value, name: name, endOfDay: false)
      case "to": to = try Self.date(value, name: name, endOfDay: true)
      case "month":
        guard let month = Self.month(value) else {
          throw Self.invalid(name, "a month, YYYY-MM (2019-03)", value)
        }
        self.month = month
      case "day":
        guard let day = Self.day(value) else {
          throw Self.invalid(name, "a day of the year, MM-DD (11-29)", value)
        }
        self.day = day
      case "camera": camera = value
      case "edited": edited = try Self.bool(value, name: name)
      case "favourite": favourite = try Self.bool(value, name: name)
      case "damaged": damaged = try Self.bool(value, name: name)
      case "near":
        let parts = value.split(separator: ",").map {
          Double($0.trimmingCharacters(in: .whitespaces))
        }
        guard parts.count == 3, let lat = parts[0], let lon = parts[1], let km = parts[2],
          (-90...90).contains(lat), (-180...180).contains(lon), km > 0
        else {
          throw Self.invalid(
            name, "LAT,LON,KM (degrees, and kilometres above 0), e.g. 48.8584,2.2945,5", value)
        }
        near = (lat, lon, km)
      case "min-duration", "max-duration":
        guard let seconds = Double(value), seconds >= 0, seconds.isFinite else {
          throw Self.invalid(name, "a number of seconds", value)
        }
        if name == "min-duration" { minDuration = seconds } else { maxDuration = seconds }
      case "sort":
        guard let value = Sort(rawValue: value) else {
          throw Self.invalid(name, "date, -date, name, size or album", value)
        }
        sort = value
      case "after":
        guard let id = AssetID(value) else {
          throw Self.invalid(name, "an asset id (26 characters)", value)
        }
        after = id
      case "rating":
        guard let range = Self.ratings(value) else {
          throw Self.invalid(name, "a rating from -1 to 5, or >=N, <=N or N-M", value)
        }
        rating = range
      case "keyword", "text", "place":
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw Self.invalid(name, "some text", value) }
        switch name {
        case "keyword": keyword = trimmed
        case "place": place = trimmed
        default: text = trimmed
        }
      default: continue
      }
    }
    if case .user? = album { self.sort = sort ?? .album } else { self.sort = sort ?? .date }
    if mediaType == nil, minDuration != nil || maxDuration != nil { mediaType = .video }
    if case .smart(.trash)? = album { trashed = true }
  }

  /// The longest value a parameter takes, in bytes.
  public static let longestValue = 1024

  private static func invalid(_ name: String, _ takes: String, _ value: String) -> DarkroomError {
    DarkroomError(.invalidArgument, "\(name) takes \(takes); not \(value.prefix(64))")
  }

  /// `2019-03` as 201903 (`0000-00` as 0); nil for anything else.
  static func month(_ text: String) -> Int? {
    let parts = text.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 2, parts[0].count == 4, parts[1].count == 2,
      parts.allSatisfy({ $0.utf8.allSatisfy { (48...57).contains($0) } }),
      let year = Int(parts[0]), let month = Int(parts[1])
    else { return nil }
    if year == 0 && month == 0 { return 0 }
    return (1...12).contains(month) ? year * 100 + month : nil
  }

  /// `MM-DD` as `month * 100 + day` (`11-29`: 1129); nil unless a day some year has (29
  /// February is one).
  static func day(_ text: String) -> Int? {
    let parts = text.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 2,
      parts.allSatisfy({ $0.count == 2 && $0.utf8.allSatisfy { (48...57).contains($0) } }),
      let month = Int(parts[0]), let day = Int(parts[1]), (1...12).contains(month), day >= 1
    else { return nil }
    let longest = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    return day <= longest ? month * 100 + day : nil
  }

  /// 1129 as `11-29`: what `day(_:)` reads.
  public static func dayText(_ day: Int) -> String {
    (day / 100 < 10 ? "0" : "") + String(day / 100) + "-" + (day % 100 < 10 ? "0" : "")
      + String(day % 100)
  }

  /// 201903 as `2019-03` (0 as `0000-00`): what `month(_:)` reads.
  public static func monthText(_ month: Int) -> String {
    let year = String(month / 100)
    let number = String(month % 100)
    return String(repeating: "0", count: max(0, 4 - year.count)) + year + "-"
      + (number.count < 2 ? "0" : "") + number
  }

  /// `4`, `>=4`, `<=2`, `3-5` (and `-1`): nil for anything else, or outside -1 to 5.
  static func ratings(_ text: String) -> ClosedRange<Int>? {
    let text = text.replacingOccurrences(of: " ", with: "")
    let bounds: (low: Int, high: Int)
    if text.hasPrefix(">="), let low = Int(text.dropFirst(2)) {
      bounds = (low, 5)
    } else if text.hasPrefix("<="), let high = Int(text.dropFirst(2)) {
      bounds = (-1, high)
    } else if let value = Int(text) {
      bounds = (value, value)
    } else if let dash = text.dropFirst().firstIndex(of: "-"), let low = Int(text[..<dash]),
      let high = Int(text[text.index(after: dash)...])
    {
      bounds = (min(low, high), max(low, high))  // 5-3 is 3-5
    } else {
      return nil
    }
    // Checked before the range is made: a range whose ends are the wrong way round traps.
    guard bounds.low >= -1, bounds.high <= 5, bounds.low <= bounds.high else { return nil }
    return bounds.low...bounds.high
  }

  package static func bool(_ text: String, name: String) throws(DarkroomError) -> Bool {
    switch text {
    case "true", "1", "yes": return true
    case "false", "0", "no": return false
    default: throw invalid(name, "true or false", text)
    }
  }

  /// `YYYY-MM-DD` (the whole day when `endOfDay`), or a full ISO 8601 time; seconds since 1970.
  static func date(_ text: String, name: String, endOfDay: Bool) throws(DarkroomError) -> Double {
    let parts = text.split(separator: "-", omittingEmptySubsequences: false)
    if parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isNumber) }),
      let day = try? Date("\(text)T00:00:00Z", strategy: .iso8601)
    {
      return day.timeIntervalSince1970 + (endOfDay ? 86_399.999 : 0)
    }
    if let date = try? Date(text, strategy: .iso8601) { return date.timeIntervalSince1970 }
    throw invalid(
      name, "a date (2024-06-30) or an ISO 8601 time (2024-06-30T18:00:00Z)", text)
  }
}

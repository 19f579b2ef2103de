/// Which assets a fetch returns and in what order: the `PHFetchOptions` of Darkroom.
///
/// ```swift
/// var query = AssetQuery()
/// query.mediaType = .photo
/// query.camera = "X100"
/// query.sort = .dateDescending
/// let result = try library.assets(matching: query)
/// ```
///
/// Every filter left nil lets everything through. Hidden and trashed assets are left out
/// unless asked for; offline ones are included (their files come back when the disk does).
public struct AssetQuery: Sendable, Equatable {
  /// An album: a folder (`folder:2024/trip`), a user album (its title) or a smart album.
  public var album: AlbumRef?
  public var mediaType: MediaType?
  /// The sort date's range, seconds since 1970, both ends included.
  public var from: Double?
  public var to: Double?
  /// The month it was taken in, on the clock where it was taken, as `year * 100 + month`
  /// (``Asset/month``; 0: a date no calendar month holds). The timeline's sections.
  public var month: Int?
  /// The day of the year it was taken on, on the clock where it was taken, as `month * 100 +
  /// day` (`1129`: 29 November, any year; ``Asset/day``): "on this day" with `to` before
  /// this year.
  public var day: Int?
  /// Text the camera's make and model contain (any case).
  public var camera: String?
  /// Only edited (true) or only unedited (false) assets.
  public var edited: Bool?
  /// Only assets whose files are damaged (true: `Asset.damage`), or only whole ones.
  public var damaged: Bool?
  /// Ratings in this range (-1 rejected, 0 none, 1 to 5 stars); assets without one drop out.
  public var rating: ClosedRange<Int>?
  /// A keyword the asset has, whole (any case).
  public var keyword: String?
  /// Text its name, caption, keywords, people, camera, place, region or country contain (any
  /// case).
  public var text: String?
  /// Its place, region or country, whole (any case): `Boulder`, `Colorado`, `United States`.
  public var place: String?
  public var favourite: Bool?
  /// Within `kilometres` of a point.
  public var near: (latitude: Double, longitude: Double, kilometres: Double)?
  /// A video's duration range, in seconds (photos have none, and so drop out).
  public var minDuration: Double?
  public var maxDuration: Double?
  public var includeHidden = false
  /// Only trashed assets (true), or none of them (false, the default).
  public var trashed = false
  public var sort: Sort = .date
  /// Only what comes after this asset in the query's order: the next page after a page
  /// that ended with it (a cursor: no rows are skipped to get there, however deep the page).
  /// Not for ``Sort/album``.
  public var after: AssetID?
  /// Only this asset, if the rest of the query holds it (a membership test in one read).
  public var only: AssetID?

  public enum Sort: String, Sendable, CaseIterable {
    case date
    case dateDescending = "-date"
    case name, size
    /// A user album's own order (by date for any other query).
    case album
  }

  public init() {}

  public static func == (a: AssetQuery, b: AssetQuery) -> Bool {
    a.album == b.album && a.mediaType == b.mediaType && a.from == b.from && a.to == b.to
      && a.month == b.month && a.day == b.day
      && a.camera == b.camera && a.edited == b.edited && a.favourite == b.favourite
      && a.damaged == b.damaged
      && a.rating == b.rating && a.keyword == b.keyword && a.text == b.text
      && a.place == b.place
      && a.near?.latitude == b.near?.latitude && a.near?.longitude == b.near?.longitude
      && a.near?.kilometres == b.near?.kilometres && a.minDuration == b.minDuration
      && a.maxDuration == b.maxDuration && a.includeHidden == b.includeHidden
      && a.trashed == b.trashed && a.sort == b.sort && a.after == b.after && a.only == b.only
  }
}

/// Names an album of any kind.
public enum AlbumRef: Sendable, Hashable {
  /// A folder of the library, relative to its root (`""`: the root).
  case folder(String)
  /// A user album, by its title.
  case user(String)
  case smart(SmartAlbum)

  /// `folder:PATH`, `smart:NAME` (`smart:favourites`), or a user album's title.
  public init(_ text: String) {
    if text.hasPrefix("folder:") {
      var path = String(text.dropFirst("folder:".count))
      while path.hasSuffix("/") { path.removeLast() }
      while path.hasPrefix("./") { path.removeFirst(2) }
      self = .folder(path == "." ? "" : path)
    } else if text.hasPrefix("smart:"), let smart = SmartAlbum(rawValue: String(text.dropFirst(6)))
    {
      self = .smart(smart)
    } else {
      self = .user(text)
    }
  }

  /// The form ``init(_:)`` reads.
  public var text: String {
    switch self {
    case .folder(let path): "folder:\(path)"
    case .user(let title): title
    case .smart(let smart): "smart:\(smart.rawValue)"
    }
  }
}

/// The albums every library has, made from what the catalog knows.
public enum SmartAlbum: String, Sendable, CaseIterable, Codable {
  case all, favourites, edited, videos
  case withLocation = "with-location"
  case recentlyAdded = "recently-added"
  case trash
  /// Files that are damaged (`Asset.damage`): cut short, headers that make no sense.
  case problems

  public var title: String {
    switch self {
    case .all: "All"
    case .favourites: "Favourites"
    case .edited: "Edited"
    case .videos: "Videos"
    case .withLocation: "With location"
    case .recentlyAdded: "Recently added"
    case .trash: "Trash"
    case .problems: "Problems"
    }
  }

  /// How far back "Recently added" reaches.
  public static let recentDays = 30.0
}

/// An album with its count and poster (key) asset, as ``Library/albums()`` lists it.
public struct Album: Sendable, Codable, Equatable {
  public enum Kind: String, Sendable, Codable { case folder, user, smart }
  public var kind: Kind
  /// `folder:PATH`, `smart:NAME`, or a user album's title: what `--album` takes.
  public var ref: String
  public var title: String
  /// For a folder, the folder that holds it (nil at the top).
  public var parent: String?
  public var count: Int
  /// The asset chosen as its poster, or else the newest.
  public var poster: AssetID?
}


type Address struct {
	City string `json:"city"`
	Zip  int32  `json:"zip"`
}

// User People who order.
type User struct {
	Id int64 `json:"id" tigris:"primaryKey:1,autoGenerate"`
	// UserName How the user signs.
	UserName string    `json:"user_name"`
	Joined   time.Time `json:"joined"`
	Address  Address   `json:"address"`
	Tags     []string  `json:"tags"`
}

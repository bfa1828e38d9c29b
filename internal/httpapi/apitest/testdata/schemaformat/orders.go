
type Order struct {
	UserId int64   `json:"user_id" tigris:"primaryKey:1"`
	N      int32   `json:"n" tigris:"primaryKey:2"`
	Total  float64 `json:"total"`
}

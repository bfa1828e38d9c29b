
class Address {
    private String city;
    private int zip;

    public String getCity() {
        return city;
    }

    public void setCity(String city) {
        this.city = city;
    }

    public int getZip() {
        return zip;
    }

    public void setZip(int zip) {
        this.zip = zip;
    }

    public Address() {
    }

    public Address(
        String city,
        int zip
    ) {
        this.city = city;
        this.zip = zip;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (o == null || getClass() != o.getClass()) {
            return false;
        }

        Address other = (Address) o;
        return
            Objects.equals(this.city, other.city) &&
            this.zip == other.zip;
    }

    @Override
    public int hashCode() {
        return Objects.hash(
            city,
            zip
        );
    }
}

// User People who order.
@TigrisCollection(value = "users")
public class User implements TigrisCollectionType {
    @TigrisPrimaryKey(order = 1, autoGenerate = true)
    private long id;
    @TigrisField(description = "How the user signs.")
    private String user_name;
    private Date joined;
    private Address address;
    private String[] tags;

    public long getId() {
        return id;
    }

    public void setId(long id) {
        this.id = id;
    }

    public String getUser_name() {
        return user_name;
    }

    public void setUser_name(String user_name) {
        this.user_name = user_name;
    }

    public Date getJoined() {
        return joined;
    }

    public void setJoined(Date joined) {
        this.joined = joined;
    }

    public Address getAddress() {
        return address;
    }

    public void setAddress(Address address) {
        this.address = address;
    }

    public String[] getTags() {
        return tags;
    }

    public void setTags(String[] tags) {
        this.tags = tags;
    }

    public User() {
    }

    public User(
        long id,
        String user_name,
        Date joined,
        Address address,
        String[] tags
    ) {
        this.id = id;
        this.user_name = user_name;
        this.joined = joined;
        this.address = address;
        this.tags = tags;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (o == null || getClass() != o.getClass()) {
            return false;
        }

        User other = (User) o;
        return
            this.id == other.id &&
            Objects.equals(this.user_name, other.user_name) &&
            Objects.equals(this.joined, other.joined) &&
            Objects.equals(this.address, other.address) &&
            Arrays.equals(this.tags, other.tags);
    }

    @Override
    public int hashCode() {
        return Objects.hash(
            id,
            user_name,
            joined,
            address,
            Arrays.hashCode(tags)
        );
    }
}

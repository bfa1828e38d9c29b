
interface Address {
  city: string;
  zip: number;
}

const addressSchema: TigrisSchema<Address> = {
  city: {
    type: TigrisDataTypes.STRING,
  },
  zip: {
    type: TigrisDataTypes.INT32,
  },
};

// User People who order.
export interface User extends TigrisCollectionType {
  id?: string;
  // user_name How the user signs.
  user_name: string;
  joined: string;
  address: Address;
  tags: Array<string>;
}

export const userSchema: TigrisSchema<User> = {
  id: {
    type: TigrisDataTypes.INT64,
    primary_key: {
      order: 1,
      autoGenerate: true,
    },
  },
  user_name: {
    type: TigrisDataTypes.STRING,
  },
  joined: {
    type: TigrisDataTypes.DATE_TIME,
  },
  address: {
    type: addressSchema,
  },
  tags: {
    type: TigrisDataTypes.ARRAY,
    items: {
      type: TigrisDataTypes.STRING,
    },
  },
};


export interface Order extends TigrisCollectionType {
  user_id: string;
  n: number;
  total: number;
}

export const orderSchema: TigrisSchema<Order> = {
  user_id: {
    type: TigrisDataTypes.INT64,
    primary_key: {
      order: 1,
    },
  },
  n: {
    type: TigrisDataTypes.INT32,
    primary_key: {
      order: 2,
    },
  },
  total: {
    type: TigrisDataTypes.NUMBER,
  },
};

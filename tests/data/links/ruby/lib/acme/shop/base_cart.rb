module Acme
  module Shop
    class BaseCart
      def total(items)
        raise NotImplementedError
      end
    end
  end
end

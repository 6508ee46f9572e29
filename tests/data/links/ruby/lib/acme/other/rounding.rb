module Acme
  module Other
    module Coins
      def self.half_up(cents)
        cents
      end
    end
  end
end
